//! One GPU run: upload the lowered tables, one cooperative launch, a
//! CPU-free wait, finalize.
//!
//! Between the launch and the end of the kernel the host makes no CUDA call
//! but `cuStreamQuery` (the wait for the kernel to end); it reads and writes
//! only host-mapped memory ([`HostControl`]): progress for the watchdog,
//! `finished` as the early hint, and `abort` to stop a stalled run. The
//! driver call log ([`CallLog`]) proves it per run: see
//! [`RunReport::driver_calls`].

use std::mem::{offset_of, size_of};
use std::sync::Arc;
use std::time::{Duration, Instant};

use autarky_shared::{
    BlockStats, HostControl, QueueCtl, QueueSlot, RunParams, Status, ABI_VERSION, TEST_HOLD_TASK,
};

use super::driver::{CallLog, DeviceMem, Event, HostMapped, Stream};
use super::{Gpu, Loaded, RunOptions};
use crate::graph::{Graph, LoweredGraph};
use crate::status::{RunReport, Snapshot};
use crate::{Error, Result};

/// A run in flight on one GPU. Dropping it without [`GpuRun::wait`] raises
/// abort and waits for the kernel, so device memory is never freed under a
/// running kernel.
pub struct GpuRun<'a> {
    gpu: &'a Gpu,
    graph: &'a Graph,
    lowered: LoweredGraph,
    opts: RunOptions,
    _loaded: Arc<Loaded>,
    stream: Stream,
    /// Host-mapped control words; `None` only after an unstoppable kernel
    /// (then leaked: the kernel still reads them, and freeing pinned memory
    /// would also block until the kernel ends).
    control: Option<HostMapped>,
    mem: Option<RunMem>,
    events: Option<(Event, Event)>,
    comm_blocks: u32,
    compute_blocks: u32,
    started: Instant,
    waited: bool,
}

/// Device allocations of one run.
struct RunMem {
    _tasks: DeviceMem,
    _succ: DeviceMem,
    _pred: DeviceMem,
    _args: DeviceMem,
    state: DeviceMem,
    _queue: DeviceMem,
    _slots: DeviceMem,
    status: DeviceMem,
    _peers: DeviceMem,
    blocks: DeviceMem,
}

const CONTROL_ABORT: usize = offset_of!(HostControl, abort);
const CONTROL_FINISHED: usize = offset_of!(HostControl, finished);
const CONTROL_PROGRESS: usize = offset_of!(HostControl, progress);

impl<'a> GpuRun<'a> {
    /// Launches `lowered` (the front end validated the options and lowered
    /// `graph` against this runtime's limits).
    pub(super) fn start(
        gpu: &'a Gpu,
        graph: &'a Graph,
        mut lowered: LoweredGraph,
        opts: RunOptions,
    ) -> Result<GpuRun<'a>> {
        // The front end checked that fault targets are tasks of the graph.
        let faults = opts.faults();
        if let Some((t, kind)) = faults.corrupt_kind {
            lowered.tasks[t.index()].kind = kind;
        }
        let loaded = gpu.load(graph.kinds())?;
        let (comm_blocks, compute_blocks) = gpu.grid(&loaded)?;
        let ctx = &gpu.ctx;

        // ---- tables and initial state ------------------------------------------
        let tasks = DeviceMem::from_slice(ctx, &lowered.tasks)?;
        let succ = DeviceMem::from_slice(ctx, &lowered.succ)?;
        let pred = DeviceMem::from_slice(ctx, &lowered.pred)?;
        let args = DeviceMem::from_slice(ctx, &lowered.args)?;
        let state = DeviceMem::from_slice(ctx, &lowered.initial_state())?;
        let cap = lowered.queue_capacity;
        debug_assert!(cap.is_power_of_two() && cap as usize >= lowered.tasks.len());
        // Slot i starts free for push ticket i; the roots occupy tickets
        // 0..roots, as if pushed before the launch.
        let mut slots: Vec<QueueSlot> = (0..cap)
            .map(|i| QueueSlot {
                word: (i as u64) << 32,
                ..Default::default()
            })
            .collect();
        for (k, &r) in lowered.roots.iter().enumerate() {
            slots[k].word = ((k as u64 + 1) << 32) | r as u64;
            slots[k].iteration = 0;
        }
        let queue_ctl = QueueCtl {
            tail: lowered.roots.len() as u32,
            ..Default::default()
        };
        let queue = DeviceMem::from_slice(ctx, std::slice::from_ref(&queue_ctl))?;
        let slots = DeviceMem::from_slice(ctx, &slots)?;
        let status0 = Status {
            start_ns: u64::MAX,
            task: autarky_shared::TASK_NONE,
            ..Default::default()
        };
        let status = DeviceMem::from_slice(ctx, std::slice::from_ref(&status0))?;
        let blocks = DeviceMem::from_slice(
            ctx,
            &vec![BlockStats::default(); (comm_blocks + compute_blocks) as usize],
        )?;
        let control = HostMapped::alloc(ctx, size_of::<HostControl>())?;
        let peers = DeviceMem::from_slice(ctx, &[control.dev_ptr()])?;
        let stream = Stream::new(ctx)?;

        let timeout = opts.timeout.unwrap_or(gpu.cfg.timeout);
        let params = RunParams {
            abi_version: faults.abi_version_override.unwrap_or(ABI_VERSION),
            pe: 0,
            num_pes: 1,
            num_tasks: lowered.tasks.len() as u32,
            iterations: opts.iterations,
            comm_blocks,
            compute_blocks,
            queue_mask: cap - 1,
            timeout_ns: timeout.as_nanos().min(u64::MAX as u128) as u64,
            test_flags: if faults.hold_task.is_some() {
                TEST_HOLD_TASK
            } else {
                0
            },
            hold_task: faults.hold_task.map(|t| t.index() as u32).unwrap_or(0),
            tasks: tasks.ptr(),
            succ: succ.ptr(),
            pred: pred.ptr(),
            args: args.ptr(),
            state: state.ptr(),
            queue: queue.ptr(),
            slots: slots.ptr(),
            status: status.ptr(),
            control: control.dev_ptr(),
            peer_controls: peers.ptr(),
            block_stats: blocks.ptr(),
        };
        let events = if opts.timed {
            Some((Event::new(ctx)?, Event::new(ctx)?))
        } else {
            None
        };
        // Every upload above was synchronous; from here on the host makes one
        // launch and then only waits.
        ctx.bind()?;
        CallLog::start();
        let started = Instant::now();
        if let Some((start, _)) = &events {
            start.record(&stream)?;
        }
        // SAFETY: 1. the megakernel's only parameter is `RunParams` by value
        // (device/megakernel.cu, layout checked by the ABI probe test);
        // 2. every address in `params` belongs to an allocation owned by the
        // returned GpuRun, which is not freed before the kernel has ended
        // (wait() or Drop waits for it).
        unsafe {
            loaded.kernel.launch_cooperative(
                &stream,
                comm_blocks + compute_blocks,
                gpu.cfg.threads,
                &params,
            )?
        };
        if let Some((_, end)) = &events {
            end.record(&stream)?;
        }
        Ok(GpuRun {
            gpu,
            graph,
            lowered,
            opts,
            _loaded: loaded,
            stream,
            control: Some(control),
            mem: Some(RunMem {
                _tasks: tasks,
                _succ: succ,
                _pred: pred,
                _args: args,
                state,
                _queue: queue,
                _slots: slots,
                status,
                _peers: peers,
                blocks,
            }),
            events,
            comm_blocks,
            compute_blocks,
            started,
            waited: false,
        })
    }

    fn control(&self) -> &HostMapped {
        self.control
            .as_ref()
            .expect("control words present until the run is given up")
    }

    /// Never free what a kernel that would not stop still uses: device
    /// memory and the host-mapped control words are leaked.
    fn leak_for_running_kernel(&mut self) {
        std::mem::forget(self.mem.take());
        std::mem::forget(self.control.take());
    }

    /// Instances completed so far (host-mapped, published by the device
    /// about every 50 µs; needs at least one comm block).
    pub fn progress(&self) -> u64 {
        self.control().read::<u64>(CONTROL_PROGRESS)
    }

    /// Asks the device to stop (through host-mapped memory: no CUDA call).
    pub fn abort(&self) {
        self.control().write::<u32>(CONTROL_ABORT, 1);
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
            let hinted = self.control().read::<u32>(CONTROL_FINISHED) != 0;
            if (hinted || polls % 16 == 0) && self.stream.query()? {
                return Ok(());
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
                        "no progress for {watchdog:?} on PE 0 ({} instances done); raising abort",
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
                            self.lowered.tasks.len() as u64 * self.opts.iterations as u64
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
        let mem = self
            .mem
            .as_ref()
            .expect("run memory present until the kernel ended");
        let mut status = [Status::default()];
        mem.status.download(&mut status)?;
        let mut state = vec![0u64; self.lowered.tasks.len()];
        mem.state.download(&mut state)?;
        let mut blocks =
            vec![BlockStats::default(); (self.comm_blocks + self.compute_blocks) as usize];
        mem.blocks.download(&mut blocks)?;
        let s = status[0];
        let snap = Snapshot {
            graph: self.graph,
            lowered: &self.lowered,
            iterations: self.opts.iterations,
            comm_blocks: self.comm_blocks,
            status: s,
            state: &state,
            blocks: &blocks,
        };
        let abort_propagation_ns = (s.error_code != 0 && s.last_exit_ns >= s.error_ns)
            .then(|| s.last_exit_ns - s.error_ns);
        let result = snap.to_result(0).map(|()| RunReport {
            backend: "gpu",
            iterations: self.opts.iterations,
            instances: blocks.iter().map(|b| b.completed).sum(),
            per_block: blocks.iter().map(|b| b.completed).collect(),
            wall,
            device_ns: (s.start_ns != u64::MAX && s.last_exit_ns >= s.start_ns)
                .then(|| s.last_exit_ns - s.start_ns),
            event_ms,
            driver_calls,
        });
        Ok(Finished {
            result,
            status: s,
            abort_propagation_ns,
        })
    }
}

/// A finished run with its raw device status (for diagnosis and fault tests).
#[derive(Debug)]
pub struct Finished {
    /// What [`GpuRun::wait`] returns.
    pub result: Result<RunReport>,
    /// The status block as the device left it.
    pub status: Status,
    /// From the first error to the last block leaving its loop (device clock).
    pub abort_propagation_ns: Option<u64>,
}

impl Drop for GpuRun<'_> {
    fn drop(&mut self) {
        if !self.waited {
            self.abort();
            if self.wait_kernel().is_err() {
                self.leak_for_running_kernel();
            }
            let _ = CallLog::take();
        }
    }
}
