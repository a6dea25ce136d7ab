//! One GPU run: upload every local PE's lowered tables, one cooperative
//! launch, a CPU-free wait, finalize.
//!
//! Between the launch and the end of the kernel the host makes no CUDA call
//! but `cuStreamQuery` (the wait for the kernel to end); it reads and writes
//! only host-mapped memory ([`HostControl`], one per PE): progress for the
//! watchdog, `finished` as the early hint, and `abort` to stop a stalled
//! run. The driver call log ([`CallLog`]) proves it per run: see
//! [`RunReport::driver_calls`]. A traced run ([`RunOptions::trace`]) gives
//! every block a device trace ring, allocated and zeroed before the launch
//! and downloaded and decoded ([`crate::trace::decode`]) after the kernel
//! ended, so tracing adds no call in between either.
//!
//! Virtual PEs: the launch hosts P PEs (P ≤ `MAX_LOCAL_PES`), each with its
//! own partition of `comm + compute` blocks, its own tables, queues, status
//! and control words; the peer tables (every PE's state array, status,
//! control words and heap base) let PEs signal each other exactly as GPUs
//! of one process would, through plain device addresses.

use std::mem::{offset_of, size_of};
use std::sync::Arc;
use std::time::{Duration, Instant};

use autarky_shared::{
    initial_status, seeded_queue_ctl, seeded_queue_slot, trace_area_records, BlockStats, ErrorCode,
    HostControl, QueueSlot, RunParams, Status, TraceRecord, ABI_VERSION, ABORT_BY_HOST,
    MAX_LOCAL_PES, RUN_MAY_STOP, RUN_STATE_SPREAD, STATE_SPREAD_WORDS, TEST_HOLD_TASK, WAKE_GROUP,
    WAKE_STRIDE,
};

use super::driver::{CallLog, DeviceMem, Event, HostMapped, Stream};
use super::progress::PeProgress;
use super::source::Variant;
use super::transport::{self, Peers};
use super::{Gpu, Loaded, RunOptions, StateLayout};
use crate::graph::{Graph, LoweredRun};
use crate::status::{RunReport, Snapshot};
use crate::trace::{self, Trace};
use crate::{Error, Result};

/// A run in flight on one GPU. Dropping it without [`GpuRun::wait`] raises
/// abort and waits for the kernel, so device memory is never freed under a
/// running kernel.
pub struct GpuRun<'a> {
    gpu: &'a Gpu,
    /// Every GPU of this process (`gpu` first); local PE `q` (counted from
    /// `first_pe`) lives on GPU `q / local_pes`.
    gpus: Vec<&'a Gpu>,
    local_pes: u32,
    /// The first PE this process hosts (0 in one process).
    first_pe: u32,
    /// The other ranks (or this process alone).
    peers: &'a dyn Peers,
    /// CUDA IPC mappings of the other ranks' state arrays and status words
    /// (multi-process runs), closed after the kernel ended.
    mappings: Option<Vec<DeviceMem>>,
    graph: &'a Graph,
    run: LoweredRun,
    opts: RunOptions,
    _loaded: Vec<Arc<Loaded>>,
    /// One stream per GPU, each running that GPU's megakernel.
    streams: Vec<Stream>,
    /// Host-mapped control words, one per local PE; empty only after an
    /// unstoppable kernel (then leaked: the kernel still reads them, and
    /// freeing pinned memory would also block until the kernel ends).
    controls: Vec<HostMapped>,
    /// Device allocations of every local PE.
    mem: Option<Vec<PeMem>>,
    _peer_tables: Option<Vec<DeviceMem>>,
    events: Option<(Event, Event)>,
    comm_blocks: u32,
    compute_blocks: u32,
    /// State-array words a task's word takes (1, or [`STATE_SPREAD_WORDS`]
    /// under [`RUN_STATE_SPREAD`]).
    state_spacing: usize,
    started: Instant,
    waited: bool,
    /// L2 set aside for windows (RunOptions::l2_persist), released when
    /// this drops: after GpuRun's own Drop, which waits for the kernels
    /// (a field drops after the struct's Drop::drop).
    l2: L2Guard<'a>,
}

/// The GPUs whose contexts set L2 aside for a run's window: released (the
/// persisting lines made normal, the set-aside given back) when this
/// drops, so nothing lingers into later work. Emptied for a kernel that
/// would not stop (the lines are only a cache hint; the context is left
/// alone while the kernel may still run).
struct L2Guard<'a> {
    gpus: Vec<&'a Gpu>,
}

impl Drop for L2Guard<'_> {
    fn drop(&mut self) {
        for gp in self.gpus.drain(..) {
            let _ = gp.ctx.bind().and_then(|_| gp.ctx.set_persisting_l2(0));
        }
    }
}

/// Device allocations of one PE.
struct PeMem {
    _tables: Vec<DeviceMem>,
    state: DeviceMem,
    status: DeviceMem,
    blocks: DeviceMem,
    /// The PE's trace rings (traced runs only).
    trace: Option<DeviceMem>,
}

const CONTROL_ABORT: usize = offset_of!(HostControl, abort);
const CONTROL_FINISHED: usize = offset_of!(HostControl, finished);
const CONTROL_PROGRESS: usize = offset_of!(HostControl, progress);

/// The ring of `capacity` seeded with `roots`.
fn seeded_ring(capacity: u32, roots: &[u32]) -> Vec<QueueSlot> {
    (0..capacity).map(|i| seeded_queue_slot(i, roots)).collect()
}

/// The kernel a launch of `run` with `opts` runs, compiled (or taken from
/// the caches) and loaded on each of `gpus`, which host `local_pes` PEs
/// each: its variant (traced or not, the PEs a GPU, the scheduler paths
/// the tables use, arrival `slots` or counters) at the graph's block shape.
/// Applies `opts`' corrupted-kind fault to `run` first (the front end
/// checked that fault targets are tasks of the graph), so the lean paths
/// are those of the tables that will run. [`GpuRun::start`] and
/// [`super::Runtime::prepare`] both load through here, so a prepared
/// kernel is the one the run finds.
pub(super) fn run_kernels(
    gpus: &[&Gpu],
    graph: &Graph,
    run: &mut LoweredRun,
    opts: &RunOptions,
    local_pes: u32,
    slots: bool,
) -> Result<Vec<Arc<Loaded>>> {
    if let Some((t, kind)) = opts.faults().corrupt_kind {
        let (pe, l) = run.local[t.index()];
        run.pes[pe as usize].tasks[l as usize].kind = kind;
    }
    let variant = Variant {
        trace: opts.trace.is_some(),
        local_pes,
        lean: super::source::Lean::of(run),
        slots,
    };
    // The graph's block shape if it sets one, else the runtime's.
    let threads = graph.threads_per_block().unwrap_or(gpus[0].cfg.threads);
    gpus.iter()
        .map(|g| g.load_variant(graph.kinds(), variant, threads))
        .collect()
}

impl<'a> GpuRun<'a> {
    /// Launches every PE of `run` (the front end validated the options and
    /// lowered `graph` against this runtime's limits) that this process
    /// hosts. `heaps` are the PEs' symmetric heap bases as this process
    /// reaches them; `peers` the other ranks (collective: every rank calls
    /// this with the same graph and options).
    pub(super) fn start(
        gpu: &'a Gpu,
        graph: &'a Graph,
        #[allow(unused_mut)] mut run: LoweredRun,
        opts: RunOptions,
        heaps: Vec<u64>,
        peers: &'a dyn Peers,
    ) -> Result<GpuRun<'a>> {
        let pes = run.pes.len() as u32;
        let gpus: Vec<&Gpu> = std::iter::once(gpu).chain(gpu.others.iter()).collect();
        let g_count = gpus.len() as u32;
        let ranks = peers.ranks();
        let slots = super::source::uses_arrival_slots(
            &run,
            opts.iterations,
            gpu.cfg.arrival_slots_max_bytes,
        );
        // The state words' layout (every PE's, every rank's: see
        // RUN_STATE_SPREAD). A line each has run on one PE only: a remote
        // producer's signal into a spread array has not run on a GPU yet.
        let spread = state_spread(opts.state_layout, &run, slots)?;
        check_spread_pes(spread, run.pes.len())?;
        if ranks > 1 {
            if opts.trace.is_some() {
                return Err(Error::Unsupported {
                    backend: "mpi",
                    option: "RunOptions::trace",
                    reason: "traces are decoded per process and not gathered across ranks yet; trace a one-process run".into(),
                });
            }
            // Every rank launches the same run, or none does.
            transport::check_same_run(
                peers,
                transport::run_fingerprint(graph, &run, opts.iterations, spread),
            )?;
        }
        for g in &gpus {
            g.check_not_stuck()?;
        }
        // The PEs this process hosts: all of them, or this rank's block.
        let local = transport::local_pes(peers.rank(), pes / ranks);
        let hosted = local.len() as u32;
        if hosted % g_count != 0 || hosted / g_count > MAX_LOCAL_PES {
            return Err(Error::InvalidConfig(format!(
                "{hosted} PE{} on {g_count} GPU{}: every GPU hosts the same number of PEs, at most {MAX_LOCAL_PES}",
                if hosted == 1 { "" } else { "s" },
                if g_count == 1 { "" } else { "s" }
            )));
        }
        // PEs per GPU (virtual PEs when more than one): local PE q (counted
        // from local.start) runs on GPU q / local_pes, in block partition
        // q % local_pes of its launch.
        let local_pes = hosted / g_count;
        let faults = opts.faults();
        let hold: Option<(u32, u32)> = faults.hold_task.map(|t| run.local[t.index()]);
        let loaded = run_kernels(&gpus, graph, &mut run, &opts, local_pes, slots)?;
        // Every GPU of a run is the same model (checked at boot), so GPU 0's
        // grid is every GPU's (asked with GPU 0's context current: loading
        // on the others made theirs current).
        gpu.ctx.bind()?;
        let (comm_blocks, mut compute_blocks) = gpu.grid(&loaded[0], local_pes)?;
        // Blocks that would only wait for dynamic work that never comes are
        // not launched: with every compute task pinned, each PE needs just
        // its pinned slots (unless the user asked for a block count).
        if gpu.cfg.compute_blocks.is_none() && run.pes.iter().all(|l| l.dynamic_compute == 0) {
            compute_blocks = run
                .pes
                .iter()
                .map(|l| l.pin_compute_slots)
                .max()
                .unwrap_or(1)
                .clamp(1, compute_blocks);
        }
        for l in &run.pes {
            check_placement(graph, l, comm_blocks, compute_blocks)?;
        }
        let timeout = opts.timeout.unwrap_or(gpu.cfg.timeout);
        let per_pe = comm_blocks + compute_blocks;
        // Under NVSHMEM every PE's state array and Status come from one
        // symmetric area (collective; the same size on every rank: every
        // rank lowered the same run, checked above), so a peer reached only
        // through NVSHMEM is signalled at this PE's own address of the word.
        let area = RunArea::new(gpu, &run, spread)?;

        // ---- per-PE tables and initial state, on the PE's GPU ---------------------
        let mut mems = Vec::with_capacity(hosted as usize);
        let mut controls = Vec::with_capacity(hosted as usize);
        let mut params = vec![[RunParams::default(); MAX_LOCAL_PES as usize]; gpus.len()];
        for (pe, l) in run
            .pes
            .iter()
            .enumerate()
            .skip(local.start as usize)
            .take(hosted as usize)
        {
            let q = pe - local.start as usize;
            let (g, local) = (q / local_pes as usize, q as u32 % local_pes);
            let ctx = &gpus[g].ctx;
            ctx.bind()?;
            let up = |bytes: &[u8]| DeviceMem::from_slice(ctx, bytes);
            let tasks = DeviceMem::from_slice(ctx, &l.tasks)?;
            let succ = DeviceMem::from_slice(ctx, &l.succ)?;
            let pred = DeviceMem::from_slice(ctx, &l.pred)?;
            let remote = DeviceMem::from_slice(ctx, &l.remote)?;
            let pinned = DeviceMem::from_slice(ctx, &l.pinned)?;
            let args = up(&l.args)?;
            let state = area.state(ctx, &spread_words(&l.initial_state(), spread))?;
            let seen = DeviceMem::from_slice(ctx, &vec![0u32; l.num_proxies.max(1) as usize])?;
            // Arrival counters (counted tasks): zero, one per local task;
            // or, with slots, each counted task's slot base and its slots.
            let arrivals = if slots {
                DeviceMem::from_slice(ctx, &l.initial_arrival_slots(opts.iterations))?
            } else {
                DeviceMem::from_slice(ctx, &vec![0u64; l.num_tasks.max(1) as usize])?
            };
            let queue = DeviceMem::from_slice(ctx, &[seeded_queue_ctl(l.roots.len())])?;
            let slots = DeviceMem::from_slice(ctx, &seeded_ring(l.queue_capacity, &l.roots))?;
            let comm_queue = DeviceMem::from_slice(ctx, &[seeded_queue_ctl(l.comm_roots.len())])?;
            let comm_slots =
                DeviceMem::from_slice(ctx, &seeded_ring(l.comm_queue_capacity, &l.comm_roots))?;
            let status = area.status(ctx, initial_status(opts.iterations))?;
            let blocks = DeviceMem::from_slice(ctx, &vec![BlockStats::default(); per_pe as usize])?;
            // Wake words (RunParams::wake): zero, one 128-byte line per
            // WAKE_GROUP blocks.
            let wake = DeviceMem::from_slice(
                ctx,
                &vec![0u32; (per_pe.div_ceil(WAKE_GROUP) * WAKE_STRIDE) as usize],
            )?;
            let control = HostMapped::alloc(ctx, size_of::<HostControl>())?;
            // Trace rings: every header (head = 0) and record zeroed.
            let trace_cap = opts.trace.map_or(0, |t| t.records_per_block);
            let rings = match opts.trace {
                Some(t) => {
                    let records = trace_area_records(per_pe, t.records_per_block);
                    let m = DeviceMem::alloc(ctx, records * size_of::<TraceRecord>())?;
                    m.fill_bytes(0)?;
                    Some(m)
                }
                None => None,
            };
            let mut flags = if l.may_stop { RUN_MAY_STOP } else { 0 };
            if spread {
                flags |= RUN_STATE_SPREAD;
            }
            let mut hold_task = 0;
            if let Some((hpe, ht)) = hold {
                if hpe as usize == pe {
                    flags |= TEST_HOLD_TASK;
                    hold_task = ht;
                }
            }
            params[g][local as usize] = RunParams {
                abi_version: faults.abi_version_override.unwrap_or(ABI_VERSION),
                pe: pe as u32,
                num_pes: pes,
                num_tasks: l.num_tasks,
                iterations: opts.iterations,
                comm_blocks,
                compute_blocks,
                queue_mask: l.queue_capacity - 1,
                timeout_ns: timeout.as_nanos().min(u64::MAX as u128) as u64,
                flags,
                hold_task,
                first_comm: l.first_comm,
                num_proxies: l.num_proxies,
                comm_queue_mask: l.comm_queue_capacity - 1,
                pin_compute_slots: l.pin_compute_slots,
                pin_comm_slots: l.pin_comm_slots,
                block_base: local * per_pe,
                tasks: tasks.ptr(),
                succ: succ.ptr(),
                pred: pred.ptr(),
                remote: remote.ptr(),
                pinned: pinned.ptr(),
                args: args.ptr(),
                state: state.ptr(),
                proxy_seen: seen.ptr(),
                queue: queue.ptr(),
                slots: slots.ptr(),
                comm_queue: comm_queue.ptr(),
                comm_slots: comm_slots.ptr(),
                status: status.ptr(),
                control: control.dev_ptr(),
                block_stats: blocks.ptr(),
                trace: rings.as_ref().map_or(0, DeviceMem::ptr),
                trace_cap,
                counted_fan_in: l.counted_fan_in,
                arrivals: arrivals.ptr(),
                wake: wake.ptr(),
                ..Default::default()
            };
            controls.push(control);
            mems.push(PeMem {
                _tables: vec![
                    tasks, succ, pred, remote, pinned, args, seen, arrivals, queue, slots,
                    comm_queue, comm_slots, wake,
                ],
                state,
                status,
                blocks,
                trace: rings,
            });
        }
        // Host-to-device copies from pageable memory (cuMemcpyHtoD) may
        // return before their last DMA chunk landed, and cuMemsetD8 (zeroed
        // buffers, the symmetric heap, trace rings) is asynchronous with
        // respect to the host: both run on the legacy default stream, which
        // the kernel's non-blocking stream does not wait for. Wait for every
        // GPU's outstanding work here, so the kernel sees every table, zeroed
        // buffer and user upload made before this run, and so the peers of
        // the exchange below (other ranks read these words through IPC) see
        // them too.
        for gp in &gpus {
            gp.ctx.bind()?;
            gp.ctx.synchronize()?;
        }

        // Peer tables: every PE reaches every PE's words with plain device
        // addresses — the same GPU's, or a peer GPU's unified addresses
        // (peer access was enabled between every pair at boot; the control
        // words are portable host-mapped memory), or, for another rank's
        // PE, this process's CUDA IPC mapping of its words (transport.rs).
        // One copy per GPU.
        let (states, statuses, mappings) = match area.peer_tables(peers)? {
            Some((states, statuses)) => (states, statuses, Vec::new()),
            None => {
                let state_mems: Vec<&DeviceMem> = mems.iter().map(|m| &m.state).collect();
                let status_mems: Vec<&DeviceMem> = mems.iter().map(|m| &m.status).collect();
                let shared_states =
                    transport::share(peers, &gpu.ctx, "run state arrays", &state_mems)?;
                let shared_statuses =
                    transport::share(peers, &gpu.ctx, "run status words", &status_mems)?;
                let mut mappings = shared_states.mappings;
                mappings.extend(shared_statuses.mappings);
                (shared_states.reach, shared_statuses.reach, mappings)
            }
        };
        // Host-mapped words cannot be exported: another rank's PE gets this
        // process's first PE's word (raising abort there is harmless, the
        // raiser aborts too); abort reaches that PE through its status.
        let ctrls: Vec<u64> = (0..pes)
            .map(|q| {
                let i = if local.contains(&q) {
                    q - local.start
                } else {
                    0
                };
                controls[i as usize].dev_ptr()
            })
            .collect();
        let mut tables = Vec::with_capacity(4 * gpus.len());
        let mut streams = Vec::with_capacity(gpus.len());
        for (g, gp) in gpus.iter().enumerate() {
            let ctx = &gp.ctx;
            ctx.bind()?;
            let t: Vec<DeviceMem> = vec![
                DeviceMem::from_slice(ctx, &states)?,
                DeviceMem::from_slice(ctx, &statuses)?,
                DeviceMem::from_slice(ctx, &ctrls)?,
                DeviceMem::from_slice(ctx, &heaps)?,
            ];
            for p in params[g].iter_mut().take(local_pes as usize) {
                p.peer_states = t[0].ptr();
                p.peer_statuses = t[1].ptr();
                p.peer_controls = t[2].ptr();
                p.peer_heaps = t[3].ptr();
            }
            tables.extend(t);
            streams.push(Stream::new(ctx)?);
        }
        // L2 windows (RunOptions::l2_persist); the guard releases the
        // set-aside L2 when it drops (an error below, or the GpuRun's end).
        let mut l2 = L2Guard { gpus: Vec::new() };
        if let Some(w) = opts.l2_persist {
            if local_pes != 1 {
                return Err(Error::InvalidConfig(format!(
                    "RunOptions::l2_persist keeps one PE's heap range in its GPU's L2; this run has {local_pes} PEs on each GPU"
                )));
            }
            for (g, gp) in gpus.iter().enumerate() {
                gp.ctx.bind()?;
                let props = &gp.ctx.props;
                let bytes = w.bytes.min(props.max_l2_window);
                let persist = bytes.min(props.max_persisting_l2);
                gp.ctx.set_persisting_l2(persist)?;
                l2.gpus.push(gp);
                let base = heaps[(local.start + g as u32) as usize] + w.offset as u64;
                streams[g].set_l2_window(base, bytes, persist as f32 / bytes as f32)?;
            }
        }
        // Timing: device events on GPU 0's stream (the run ends when every
        // GPU's kernel has; with several GPUs this times GPU 0's kernel).
        gpu.ctx.bind()?;
        let events = if opts.timed {
            Some((Event::new(&gpu.ctx)?, Event::new(&gpu.ctx)?))
        } else {
            None
        };
        // Every upload above has landed (the context synchronize after the
        // tables; the peer tables below it are small, and synchronized
        // again here); from here on the host makes one launch per GPU (each
        // after making its context current) and then only waits.
        for gp in &gpus {
            gp.ctx.bind()?;
            gp.ctx.synchronize()?;
        }
        gpu.ctx.bind()?;
        CallLog::start();
        let started = Instant::now();
        if let Some((start, _)) = &events {
            start.record(&streams[0])?;
        }
        for (g, gp) in gpus.iter().enumerate() {
            if g > 0 {
                gp.ctx.bind()?;
            }
            // SAFETY: 1. the megakernel's only parameter is `LaunchParams`, an
            // array of MAX_LOCAL_PES `RunParams` by value (device/megakernel.cu;
            // RunParams' layout is checked by the ABI probe test); 2. every
            // address in `params[g]` belongs to an allocation owned by the
            // returned GpuRun (or the runtime's symmetric heap, which outlives
            // it), not freed before every kernel has ended (wait() or Drop
            // waits for them); 3. addresses on other GPUs are reachable: peer
            // access is enabled between every pair of the run's GPUs.
            unsafe {
                loaded[g].kernel.launch_cooperative(
                    &streams[g],
                    local_pes * per_pe,
                    loaded[g].threads,
                    &params[g],
                )?
            };
        }
        if let Some((_, end)) = &events {
            gpu.ctx.bind()?;
            end.record(&streams[0])?;
        }
        Ok(GpuRun {
            gpu,
            gpus,
            local_pes,
            first_pe: local.start,
            peers,
            mappings: Some(mappings),
            graph,
            run,
            opts,
            _loaded: loaded,
            streams,
            controls,
            mem: Some(mems),
            _peer_tables: Some(tables),
            events,
            comm_blocks,
            state_spacing: spacing(spread),
            compute_blocks,
            started,
            waited: false,
            l2,
        })
    }

    /// Never free what a kernel that would not stop still uses: device
    /// memory and the host-mapped control words are leaked.
    fn leak_for_running_kernel(&mut self) {
        self.l2.gpus.clear();
        std::mem::forget(self.mem.take());
        std::mem::forget(self._peer_tables.take());
        std::mem::forget(self.mappings.take());
        std::mem::forget(std::mem::take(&mut self.controls));
        // Keep the streams: the next run on each GPU checks they ended.
        for (g, s) in self.gpus.iter().zip(std::mem::take(&mut self.streams)) {
            g.stuck.lock().push(s);
        }
    }

    /// Instances completed so far on every PE (host-mapped, published by
    /// each PE's comm block 0 about every 50 µs).
    pub fn progress(&self) -> u64 {
        self.controls
            .iter()
            .map(|c| c.read::<u64>(CONTROL_PROGRESS))
            .sum()
    }

    /// Every PE's progress words now: instances, iterations done, the last
    /// residual a body reported, whether it finished. Read from host-mapped
    /// memory (no CUDA call: the run stays CPU-free however often this is
    /// called).
    pub fn progress_snapshot(&self) -> Vec<PeProgress> {
        self.controls
            .iter()
            .zip(&self.run.pes[self.first_pe as usize..])
            .enumerate()
            .map(|(q, (c, l))| PeProgress::read(c, self.first_pe + q as u32, l.num_tasks))
            .collect()
    }

    /// Asks every PE to stop (through host-mapped memory: no CUDA call).
    pub fn abort(&self) {
        for c in &self.controls {
            c.write::<u32>(CONTROL_ABORT, ABORT_BY_HOST);
        }
    }

    fn all_finished(&self) -> bool {
        !self.controls.is_empty()
            && self
                .controls
                .iter()
                .all(|c| c.read::<u32>(CONTROL_FINISHED) != 0)
    }

    /// Waits for the kernel to end without CUDA calls other than
    /// `cuStreamQuery`; raises abort when the run makes no progress for the
    /// watchdog period; reports a kernel that will not stop.
    fn wait_kernel(&self) -> Result<()> {
        let watchdog = self.opts.watchdog.unwrap_or_else(|| {
            self.opts.timeout.unwrap_or(self.gpu.cfg.timeout) * 2 + Duration::from_secs(1)
        });
        let grace = self
            .opts
            .abort_grace
            .unwrap_or_else(|| Duration::from_secs(5).max(watchdog / 2));
        let mut last_progress = self.progress();
        let mut last_change = Instant::now();
        let mut aborted_at: Option<Instant> = None;
        let mut polls: u64 = 0;
        loop {
            // The host-mapped `finished` flag is the cheap hint; the stream
            // query is the truth (a kernel that faulted never sets the flag).
            let hinted = self.all_finished();
            if hinted || polls % 16 == 0 {
                let mut ended = true;
                for st in &self.streams {
                    ended &= st.query()?;
                }
                if ended {
                    return Ok(());
                }
            }
            polls += 1;
            let p = self.progress();
            if p != last_progress {
                last_progress = p;
                last_change = Instant::now();
            }
            match aborted_at {
                None if last_change.elapsed() > watchdog => {
                    tracing::warn!(
                        "no progress for {watchdog:?} ({} instances done); raising abort",
                        last_progress
                    );
                    self.abort();
                    aborted_at = Some(Instant::now());
                }
                Some(t) if t.elapsed() > grace => {
                    return Err(Error::Unstoppable {
                        pe: 0,
                        waited_ms: t.elapsed().as_millis() as u64,
                        report: format!(
                            "{} of {} instances completed; a task body is likely stuck in a loop that does not use ctx.wait_geq",
                            last_progress,
                            self.graph.num_tasks() as u64 * self.opts.iterations as u64
                        ),
                    });
                }
                _ => {}
            }
            if self.started.elapsed() < Duration::from_millis(2) {
                std::hint::spin_loop();
            } else if self.started.elapsed() < Duration::from_millis(50) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// Waits for the run to end and returns what it did, or the error that
    /// ended it (with the deadlock report for timeouts and aborts).
    pub fn wait(self) -> Result<RunReport> {
        self.wait_detailed()?.result
    }

    /// Like [`GpuRun::wait`], but also returns the raw status block and the
    /// abort propagation time. The outer `Err` means the host could not wait
    /// (a driver error, or a kernel that would not stop).
    pub fn wait_detailed(mut self) -> Result<Finished> {
        self.waited = true;
        let ended = self.wait_kernel();
        let driver_calls = CallLog::take();
        if let Err(e) = ended {
            if matches!(e, Error::Unstoppable { .. }) {
                self.leak_for_running_kernel();
            }
            return Err(e);
        }
        let wall = self.started.elapsed();
        let event_ms = match &self.events {
            Some((s, e)) => Some(s.elapsed_ms(e)?),
            None => None,
        };
        let mems = self
            .mem
            .as_ref()
            .expect("run memory present until the kernel ended");
        let per_pe = (self.comm_blocks + self.compute_blocks) as usize;
        let mut local_ends = Vec::with_capacity(mems.len());
        for (q, m) in mems.iter().enumerate() {
            let l = &self.run.pes[self.first_pe as usize + q];
            // The PE's memory lives on its GPU: copy with that context current.
            self.gpus[q / self.local_pes as usize].ctx.bind()?;
            let mut status = [Status::default()];
            m.status.download(&mut status)?;
            let mut spread_state = vec![0u64; l.tasks.len() * self.state_spacing];
            m.state.download(&mut spread_state)?;
            let state = spread_state
                .iter()
                .step_by(self.state_spacing)
                .copied()
                .collect();
            let mut blocks = vec![BlockStats::default(); per_pe];
            m.blocks.download(&mut blocks)?;
            local_ends.push(PeEnd {
                status: status[0],
                state,
                blocks,
            });
        }
        let local_result = if self.peers.ranks() > 1 {
            let first = self.first_pe as usize;
            self.first_error(local_ends.iter().enumerate().map(|(q, e)| (first + q, e)))
                .1
        } else {
            Ok(())
        };
        // Every rank reports every PE's end (the same error on all ranks).
        // A rank lost during the run leaves the exchange incomplete: report
        // what this rank's own PEs recorded along with it.
        let ends = match self.gather_ends(local_ends, per_pe) {
            Ok(ends) => ends,
            Err(Error::RankTimeout {
                what,
                waited_ms,
                ranks,
            }) => {
                return Err(Error::RankLost {
                    what,
                    waited_ms,
                    ranks,
                    local: local_result.err().map(Box::new),
                })
            }
            Err(e) => return Err(e),
        };
        // The other ranks' kernels have ended too: close their mappings.
        drop(self.mappings.take());
        let (first_pe, result) = self.first_error(ends.iter().enumerate());
        let mut statuses = Vec::with_capacity(ends.len());
        let mut all_blocks = Vec::new();
        for end in ends {
            statuses.push(end.status);
            all_blocks.extend(end.blocks);
        }
        let s = statuses[first_pe.unwrap_or(0)];
        let start = statuses
            .iter()
            .map(|s| s.start_ns)
            .min()
            .unwrap_or(u64::MAX);
        let end = statuses.iter().map(|s| s.last_exit_ns).max().unwrap_or(0);
        let iterations = statuses.iter().map(|s| s.limit).min().unwrap_or(0);
        let abort_propagation_ns =
            (s.error_code != 0 && end >= s.error_ns).then(|| end - s.error_ns);
        let mut trace = self.download_trace(mems, per_pe as u32)?;
        let result = result.map(|()| RunReport {
            backend: "gpu",
            iterations,
            instances: all_blocks.iter().map(|b| b.completed).sum(),
            per_block: all_blocks.iter().map(|b| b.completed).collect(),
            wall,
            device_ns: (start != u64::MAX && end >= start).then(|| end - start),
            event_ms,
            driver_calls,
            trace: trace.take(),
        });
        Ok(Finished {
            result,
            status: s,
            pe_statuses: statuses,
            abort_propagation_ns,
            trace,
        })
    }

    /// The error a run reports, from its PEs' ends (`(pe, end)`): the first
    /// one recorded anywhere (the others are its consequences: aborts,
    /// timeouts), and the PE that recorded it. A host abort ranks after
    /// every other error: the host raises it when the run stalled or was
    /// dropped, and a PE's own record says more. (Records on different GPUs
    /// are ordered by their GPUs' clocks, which may differ by microseconds,
    /// as much as abort takes to cross: a consequence must not win on a
    /// skewed clock.)
    fn first_error<'e>(
        &self,
        ends: impl IntoIterator<Item = (usize, &'e PeEnd)>,
    ) -> (Option<usize>, Result<()>) {
        // (consequence rank, error_ns, pe)
        let mut first: Option<(bool, u64, usize)> = None;
        let mut result = Ok(());
        for (pe, end) in ends {
            let s = end.status;
            let key = (s.error_code == ErrorCode::HostAbort as u32, s.error_ns, pe);
            if s.error_code != 0 && first.map_or(true, |f| (key.0, key.1) < (f.0, f.1)) {
                first = Some(key);
                let snap = Snapshot {
                    graph: self.graph,
                    lowered: &self.run.pes[pe],
                    iterations: s.limit,
                    run_iterations: self.opts.iterations,
                    comm_blocks: self.comm_blocks,
                    status: s,
                    state: &end.state,
                    blocks: &end.blocks,
                };
                result = snap.to_result(pe as u32);
            }
        }
        (first.map(|f| f.2), result)
    }

    /// Every PE's end, in PE order: this process's `local` ones, and with
    /// several ranks the others', gathered (bounded by the rank timeout).
    ///
    /// A rank's ends are as long as its PEs' state arrays, and PEs have
    /// different task counts (a decomposition that does not divide evenly,
    /// a PE with the reduction root), but an exchange has one length on
    /// every rank: each rank pads its bytes to the longest rank's, which
    /// every rank computes alike from the lowered run (the same on every
    /// rank: `check_same_run`).
    fn gather_ends(&self, local: Vec<PeEnd>, per_pe: usize) -> Result<Vec<PeEnd>> {
        let ranks = self.peers.ranks() as usize;
        if ranks == 1 {
            return Ok(local);
        }
        let per_rank = self.run.pes.len() / ranks;
        let pe_bytes = |pe: usize| {
            size_of::<Status>()
                + per_pe * size_of::<BlockStats>()
                + self.run.pes[pe].tasks.len() * size_of::<u64>()
        };
        let longest = (0..ranks)
            .map(|r| {
                (r * per_rank..(r + 1) * per_rank)
                    .map(pe_bytes)
                    .sum::<usize>()
            })
            .max()
            .unwrap_or(0);
        let mut bytes = Vec::with_capacity(longest);
        for e in &local {
            bytes.extend_from_slice(bytemuck::bytes_of(&e.status));
            bytes.extend_from_slice(bytemuck::cast_slice(&e.blocks));
            bytes.extend_from_slice(bytemuck::cast_slice(&e.state));
        }
        debug_assert!(
            bytes.len() <= longest,
            "this rank's ends fit the padded length"
        );
        bytes.resize(longest, 0);
        let all = self.peers.allgather("run status", &bytes)?;
        let mut ends = Vec::with_capacity(self.run.pes.len());
        for (r, b) in all.iter().enumerate() {
            let mut at = 0;
            for pe in r * per_rank..(r + 1) * per_rank {
                let n_state = self.run.pes[pe].tasks.len();
                let take = |at: &mut usize, n: usize| {
                    let s = &b[*at..*at + n];
                    *at += n;
                    s
                };
                let status: Status =
                    bytemuck::pod_read_unaligned(take(&mut at, size_of::<Status>()));
                let blocks: Vec<BlockStats> = take(&mut at, per_pe * size_of::<BlockStats>())
                    .chunks_exact(size_of::<BlockStats>())
                    .map(bytemuck::pod_read_unaligned)
                    .collect();
                let state: Vec<u64> = take(&mut at, n_state * 8)
                    .chunks_exact(8)
                    .map(bytemuck::pod_read_unaligned)
                    .collect();
                ends.push(PeEnd {
                    status,
                    state,
                    blocks,
                });
            }
        }
        Ok(ends)
    }

    /// Downloads and decodes every PE's trace rings (traced runs; after the
    /// kernel ended), with the graph's labels.
    fn download_trace(&self, mems: &[PeMem], blocks: u32) -> Result<Option<Trace>> {
        let Some(opts) = self.opts.trace else {
            return Ok(None);
        };
        let cap = opts.records_per_block;
        let mut areas = Vec::with_capacity(mems.len());
        for (q, m) in mems.iter().enumerate() {
            // The rings live on the PE's GPU: copy with its context current.
            self.gpus[q / self.local_pes as usize].ctx.bind()?;
            let rings = m
                .trace
                .as_ref()
                .expect("a traced run allocated every PE's rings");
            let mut area = vec![TraceRecord::default(); trace_area_records(blocks, cap)];
            rings.download(&mut area)?;
            areas.push(area);
        }
        let pes: Vec<trace::decode::PeRings<'_>> = areas
            .iter()
            .zip(&self.run.pes)
            .enumerate()
            .map(|(pe, (area, l))| trace::decode::PeRings {
                pe: pe as u32,
                comm_blocks: self.comm_blocks,
                records_per_block: cap,
                area,
                global: &l.global,
            })
            .collect();
        // The areas were allocated right here for `blocks` rings of `cap`
        // (a power of two: RunOptions::check), so their shape is right.
        let mut t = trace::decode::decode(&pes).expect("trace areas allocated for this shape");
        t.labels = (0..self.graph.num_tasks() as u32)
            .map(|g| self.graph.label(g))
            .collect();
        Ok(Some(t))
    }
}

/// What a PE left when its kernel ended: its status, task states and
/// block counters.
struct PeEnd {
    status: Status,
    state: Vec<u64>,
    blocks: Vec<BlockStats>,
}

/// Whether `run` lays its state arrays out a line a word: every PE or none
/// (a producer writes a remote consumer's word at its own spacing). As
/// `layout` says, else as `AUTARKY_STATE_SPACING` (`8` or `128` bytes a
/// word) says — an override for experiments — else automatically
/// ([`auto_spread`]); `slots`: the run counts joins with arrival slots.
fn state_spread(layout: Option<StateLayout>, run: &LoweredRun, slots: bool) -> Result<bool> {
    match layout {
        Some(l) => Ok(l == StateLayout::Spread),
        None => Ok(
            spread_by(std::env::var("AUTARKY_STATE_SPACING").ok().as_deref())?
                .unwrap_or_else(|| auto_spread(run, slots)),
        ),
    }
}

/// The automatic layout's bound on state words a line each: the array is
/// uploaded at every launch and read back after it (16 384 tasks: 2 MiB).
pub(crate) const AUTO_SPREAD_MAX_WORDS: usize = 16384;

/// A task checking more predecessors than this reads them as a scan (the
/// pinned lean path's bound: `PIN_LEAN_PREDS` in scheduler.cuh).
pub(crate) const AUTO_SPREAD_NARROW_PREDS: u32 = 8;

/// The automatic state layout: a line a word on a run of one PE with at
/// most [`AUTO_SPREAD_MAX_WORDS`] words in which no task checks its
/// instances by reading more than [`AUTO_SPREAD_NARROW_PREDS`] predecessor
/// words (a join counted by arrival slots reads none), else packed.
/// Measured on one H200 (docs/performance.md, sessions 26 and 32): a line
/// each takes a 32 × 32 stencil of pinned empty tiles from 1.87 to 1.45 µs
/// an iteration (sixteen publishers to a line queue at its L2 slice) and
/// leaves chains, independent tasks and a 1000-input join under slots
/// where they were, but a wide scan then reads a line per input (CG 2D
/// 1024², whose reduces poll ~1000 tile words: 36.3 → 44.2 µs an
/// iteration), so graphs with one stay packed.
fn auto_spread(run: &LoweredRun, slots: bool) -> bool {
    run.pes.len() == 1
        && run.pes.iter().all(|l| {
            l.tasks.len() <= AUTO_SPREAD_MAX_WORDS && !l.scans_wide(AUTO_SPREAD_NARROW_PREDS, slots)
        })
}

/// The override `env` (`AUTARKY_STATE_SPACING`): `None` when unset (the
/// automatic layout).
fn spread_by(env: Option<&str>) -> Result<Option<bool>> {
    match env.map(str::trim) {
        None | Some("") => Ok(None),
        Some("8") => Ok(Some(false)),
        Some("128") => Ok(Some(true)),
        Some(v) => Err(Error::InvalidConfig(format!(
            "AUTARKY_STATE_SPACING={v}: give 8 (packed state words) or 128 (a line each), or leave it unset"
        ))),
    }
}

/// A line a state word only on runs of one PE: tested there only (a
/// remote producer's signal into a spread array has not run on a GPU).
fn check_spread_pes(spread: bool, pes: usize) -> Result<()> {
    if spread && pes > 1 {
        return Err(Error::Unsupported {
            backend: "gpu",
            option: "StateLayout::Spread",
            reason: format!(
                "a state word a line is measured and tested on runs of one PE; this run has {pes}"
            ),
        });
    }
    Ok(())
}

/// State-array words a task takes.
fn spacing(spread: bool) -> usize {
    if spread {
        STATE_SPREAD_WORDS as usize
    } else {
        1
    }
}

/// `words` laid out as the device reads them: as they are, or each at index
/// `t × STATE_SPREAD_WORDS` (the rest zero) when `spread`.
fn spread_words(words: &[u64], spread: bool) -> Vec<u64> {
    if !spread {
        return words.to_vec();
    }
    let k = spacing(true);
    let mut out = vec![0u64; words.len() * k];
    for (t, &w) in words.iter().enumerate() {
        out[t * k] = w;
    }
    out
}

/// Where a run's state arrays and Status words live: fresh device memory
/// per PE, or (NVSHMEM) one symmetric area reused by every run of the
/// runtime. The area is reused only after the previous run ended on every
/// rank (its end is a collective gather, after each PE's blocks quieted
/// their NVSHMEM operations in block_exit), and [`RunArea::peer_tables`]
/// waits for every rank to have written its initial words before any rank
/// launches (a peer's first signal must not be overwritten by them).
struct RunArea {
    /// `(symmetric address, bytes of the state array part, the job)`.
    #[cfg(feature = "nvshmem")]
    nvshmem: Option<(u64, usize, Arc<super::nvshmem::boot::Job>)>,
}

impl RunArea {
    #[cfg_attr(not(feature = "nvshmem"), allow(unused_variables))]
    fn new(gpu: &Gpu, run: &LoweredRun, spread: bool) -> Result<RunArea> {
        #[cfg(feature = "nvshmem")]
        if let Some(job) = &gpu.nvshmem {
            let state_bytes = run
                .pes
                .iter()
                .map(|l| l.tasks.len() * spacing(spread) * size_of::<u64>())
                .max()
                .unwrap_or(0)
                .max(8)
                .next_multiple_of(256);
            let sym = job.nv.lock().run_area(state_bytes + size_of::<Status>())?;
            return Ok(RunArea {
                nvshmem: Some((sym, state_bytes, job.clone())),
            });
        }
        Ok(RunArea {
            #[cfg(feature = "nvshmem")]
            nvshmem: None,
        })
    }

    /// A PE's state array, holding `initial`.
    fn state(&self, ctx: &super::driver::Context, initial: &[u64]) -> Result<DeviceMem> {
        #[cfg(feature = "nvshmem")]
        if let Some((sym, bytes, _)) = &self.nvshmem {
            // SAFETY: [sym, sym + bytes) is this PE's part of the symmetric
            // run area (allocated for at least `bytes` + a Status), live
            // until NVSHMEM is finalized, after the run (the job outlives
            // the runtime's runs).
            let m = unsafe { DeviceMem::borrowed(*sym, *bytes) };
            m.upload(initial)?;
            return Ok(m);
        }
        DeviceMem::from_slice(ctx, initial)
    }

    /// A PE's Status, holding `initial`.
    fn status(&self, ctx: &super::driver::Context, initial: Status) -> Result<DeviceMem> {
        #[cfg(feature = "nvshmem")]
        if let Some((sym, bytes, _)) = &self.nvshmem {
            // SAFETY: as in `state`: the Status part of the run area, right
            // after the state array part.
            let m = unsafe { DeviceMem::borrowed(*sym + *bytes as u64, size_of::<Status>()) };
            m.upload(&[initial])?;
            return Ok(m);
        }
        DeviceMem::from_slice(ctx, &[initial])
    }

    /// Under NVSHMEM, every PE's state array and Status entries (the
    /// `nvshmem_ptr` address, or 0 for an NVSHMEM-only peer), after every
    /// rank has written its initial words (collective); `None` otherwise
    /// (the caller shares its allocations).
    #[cfg_attr(not(feature = "nvshmem"), allow(unused_variables))]
    fn peer_tables(&self, peers: &dyn Peers) -> Result<Option<(Vec<u64>, Vec<u64>)>> {
        #[cfg(feature = "nvshmem")]
        if let Some((sym, bytes, job)) = &self.nvshmem {
            peers.allgather("run state words written", &[])?;
            let status = *sym + *bytes as u64;
            let nv = job.nv.lock();
            let states = nv
                .device_paths(*sym)
                .iter()
                .map(|p| p.table_entry(*sym))
                .collect();
            let statuses = nv
                .device_paths(status)
                .iter()
                .map(|p| p.table_entry(status))
                .collect();
            return Ok(Some((states, statuses)));
        }
        Ok(None)
    }
}

/// Pinned slots must exist on the PE, and dynamic tasks need a block that is
/// not pinned.
fn check_placement(
    graph: &Graph,
    l: &crate::graph::LoweredGraph,
    comm: u32,
    compute: u32,
) -> Result<()> {
    if l.pin_compute_slots > compute {
        return Err(Error::InvalidConfig(format!(
            "PE {} pins tasks to compute slot {} but has {compute} compute blocks",
            l.pe,
            l.pin_compute_slots - 1
        )));
    }
    if l.pin_comm_slots > comm {
        return Err(Error::InvalidConfig(format!(
            "PE {} pins comm tasks to comm slot {} but has {comm} comm blocks",
            l.pe,
            l.pin_comm_slots - 1
        )));
    }
    if l.dynamic_compute > 0 && l.pin_compute_slots == compute {
        let t = l
            .first_unpinned_compute()
            .expect("a dynamic compute task exists");
        return Err(Error::InvalidConfig(format!(
            "task {} of PE {} is not pinned, but all {compute} compute blocks of the PE run pinned lists; pin it or add compute blocks",
            l.label(graph, t),
            l.pe
        )));
    }
    Ok(())
}

/// A finished run with its raw device status (for diagnosis and fault tests).
#[derive(Debug)]
pub struct Finished {
    /// What [`GpuRun::wait`] returns.
    pub result: Result<RunReport>,
    /// The status block as the device left it: the PE whose record is
    /// the run's error (PE 0's when the run succeeded).
    pub status: Status,
    /// Every PE's status block, in PE order. After an error, the PEs that
    /// only stopped because of it have `error_code` 0: abort is not an
    /// error of theirs.
    pub pe_statuses: Vec<Status>,
    /// From the first error to the last block leaving its loop (device clock).
    pub abort_propagation_ns: Option<u64>,
    /// The trace of a traced run that failed (what every block did up to
    /// the error); a successful run's trace is in [`RunReport::trace`].
    pub trace: Option<Trace>,
}

impl Drop for GpuRun<'_> {
    fn drop(&mut self) {
        if !self.waited && !self.controls.is_empty() {
            self.abort();
            if self.wait_kernel().is_err() {
                self.leak_for_running_kernel();
            }
            let _ = CallLog::take();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_layout_override_and_the_automatic_one() {
        assert_eq!(spread_by(None).unwrap(), None);
        assert_eq!(spread_by(Some("")).unwrap(), None);
        assert_eq!(spread_by(Some("8")).unwrap(), Some(false));
        assert_eq!(spread_by(Some(" 128 ")).unwrap(), Some(true));
        let e = spread_by(Some("64")).unwrap_err().to_string();
        assert!(
            e.contains("AUTARKY_STATE_SPACING=64") && e.contains("128"),
            "{e}"
        );
        // An explicit layout wins over the automatic choice either way.
        let (stencil, join) = (stencil_run(4, 1), join_run(20, false));
        assert!(state_spread(Some(StateLayout::Spread), &join, false).unwrap());
        assert!(!state_spread(Some(StateLayout::Packed), &stencil, true).unwrap());
    }

    /// A `rows × rows` grid of tiles, each waiting for its neighbours'
    /// previous instance, lowered for `pes` PEs (the tiles split between
    /// them in order), each PE's tiles pinned one a slot.
    fn stencil_run(rows: u32, pes: u32) -> LoweredRun {
        let mut g = crate::graph::Graph::new();
        let k = g.add_kind(crate::graph::TaskKind::new("k", "")).unwrap();
        let per_pe = (rows * rows).div_ceil(pes);
        let ids: Vec<_> = (0..rows * rows)
            .map(|i| {
                let t = g.add_task_bytes(k, &[]);
                g.pin(t, i % per_pe).set_pe(t, i / per_pe);
                t
            })
            .collect();
        for r in 0..rows {
            for c in 0..rows {
                let at = |r: u32, c: u32| ids[(r * rows + c) as usize];
                if r + 1 < rows {
                    g.add_carried_edge(at(r, c), at(r + 1, c));
                    g.add_carried_edge(at(r + 1, c), at(r, c));
                }
                if c + 1 < rows {
                    g.add_carried_edge(at(r, c), at(r, c + 1));
                    g.add_carried_edge(at(r, c + 1), at(r, c));
                }
            }
        }
        let limits = crate::graph::Limits {
            num_pes: pes,
            ..Default::default()
        };
        g.lower_run(&limits).unwrap()
    }

    /// `inputs` dynamic tasks joined by one task (counted when it has
    /// more inputs than the default counted fan-in), dynamic or, with
    /// `pin_join`, pinned to slot 0.
    fn join_run(inputs: u32, pin_join: bool) -> LoweredRun {
        let mut g = crate::graph::Graph::new();
        let k = g.add_kind(crate::graph::TaskKind::new("k", "")).unwrap();
        let join = g.add_task_bytes(k, &[]);
        if pin_join {
            g.pin(join, 0);
        }
        for _ in 0..inputs {
            let t = g.add_task_bytes(k, &[]);
            g.add_edge(t, join);
        }
        g.lower_run(&crate::graph::Limits::default()).unwrap()
    }

    /// The automatic layout: a line a word for narrow graphs on one PE
    /// (a pinned stencil; a wide join counted by arrival slots), packed
    /// for a wide scan (the join without slots, a pinned join), for
    /// several PEs, and past the size bound.
    #[test]
    fn the_automatic_layout_spreads_narrow_graphs_of_one_pe() {
        let narrow = stencil_run(8, 1);
        assert!(auto_spread(&narrow, false));
        assert!(auto_spread(&narrow, true));
        assert!(!auto_spread(&stencil_run(8, 2), false), "two PEs");
        assert!(
            !auto_spread(&stencil_run(130, 1), false),
            "{} words over the bound {AUTO_SPREAD_MAX_WORDS}",
            130 * 130
        );
        let wide = AUTO_SPREAD_NARROW_PREDS + 12;
        let join = join_run(wide, false);
        assert!(join.pes[0].uses_counting(), "the join is counted");
        assert!(auto_spread(&join, true), "slots: the join reads no word");
        assert!(!auto_spread(&join, false), "one counter: the join scans");
        assert!(
            !auto_spread(&join_run(wide, true), true),
            "a pinned join polls"
        );
        // Not wide: as many inputs as the bound.
        assert!(auto_spread(
            &join_run(AUTO_SPREAD_NARROW_PREDS, false),
            false
        ));
    }

    #[test]
    fn spread_state_words_are_refused_on_several_pes() {
        assert!(check_spread_pes(true, 1).is_ok());
        assert!(check_spread_pes(false, 4).is_ok());
        let e = check_spread_pes(true, 2).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains("one PE"), "{e}");
    }

    #[test]
    fn spread_words_put_each_word_at_its_line() {
        let words = [5u64, 0, 7];
        assert_eq!(spread_words(&words, false), words.to_vec());
        let s = spread_words(&words, true);
        let k = STATE_SPREAD_WORDS as usize;
        assert_eq!(s.len(), 3 * k);
        assert_eq!(k * size_of::<u64>(), 128);
        for (t, &w) in words.iter().enumerate() {
            assert_eq!(s[t * k], w);
            assert!(s[t * k + 1..(t + 1) * k].iter().all(|&x| x == 0));
        }
        // What the end of a run reads back: every k-th word.
        let back: Vec<u64> = s.iter().step_by(k).copied().collect();
        assert_eq!(back, words.to_vec());
    }
}
