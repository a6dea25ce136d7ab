//! Where a run's PEs live, and how this process reaches the ones it does
//! not host.
//!
//! Two transports fill the same peer-pointer tables of [`RunParams`]
//! (`peer_states`, `peer_statuses`, `peer_controls`, `peer_heaps`), so the
//! device code does not know which one it runs under:
//!
//! - [`Transport::InProcess`]: every PE of the run is in this process
//!   (virtual PEs on one GPU, or [`crate::Builder::gpus`] GPUs with peer
//!   access). A peer's words are plain device addresses.
//! - [`Transport::MpiIpc`]: one process per MPI rank, each on one GPU,
//!   hosting [`crate::Builder::pes_per_rank`] PEs. The words a peer writes
//!   (the symmetric heap, every PE's state array and `Status`) are
//!   `cuMemAlloc` memory, exported with `cuIpcGetMemHandle`, exchanged with
//!   an MPI allgather and mapped with `cuIpcOpenMemHandle` (same GPU or a
//!   peer GPU). Host-mapped `HostControl` words cannot be exported; a
//!   remote PE's `peer_controls` entry points at this process's own first
//!   PE's word (raising abort there is harmless: the raiser aborts too) and
//!   abort reaches the remote PE through its `Status::abort` device
//!   mirror, which every wait polls.
//! - [`Transport::Nvshmem`]: one process per MPI rank, one PE per rank =
//!   one NVSHMEM PE (bootstrapped with NVSHMEM's unique id, exchanged over
//!   the same MPI collectives). The symmetric heap and every run's state
//!   arrays and `Status` words come from `nvshmem_malloc`, so a PE's words
//!   are at the same address on every PE. A peer entry is the
//!   `nvshmem_ptr` address when the peer is load/store reachable (same
//!   node, P2P) and 0 when it is reachable only through NVSHMEM; the
//!   device then signals and puts with NVSHMEM (autarky/nvshmem.cuh),
//!   abort included (an NVSHMEM put of the peer's `Status::abort`).
//!   Control words are as with `MpiIpc`.
//!
//! Protocol of one collective exchange ([`Peers::allgather`]): every rank
//! sends a header (a hash of the exchange's name and the payload length),
//! then the payload; a rank that is in another exchange, or sends another
//! length, makes every rank fail with [`Error::RanksDisagree`]; a rank that
//! does not arrive within the bound makes every other rank fail with
//! [`Error::RankTimeout`] (MPI collectives would block forever: the MPI
//! backend polls nonblocking ones against a deadline).
//!
//! [`RunParams`]: autarky_shared::RunParams

use std::ops::Range;

use sha2::{Digest, Sha256};

use super::driver::{Context, DeviceMem, IpcHandle};
use crate::graph::{Graph, LoweredRun};
use crate::{Error, Result};

/// How the PEs of a run reach each other ([`crate::Builder::transport`]).
///
/// A transport is a property of the whole runtime, not of one run: it
/// decides how the process starts (alone, or as one rank of `mpirun`), how
/// many PEs it hosts and which GPU it takes, so it is chosen once, at
/// `build()`. An enum rather than a `Builder::mpi()` switch because the
/// next transport (NVSHMEM across nodes) is another value of the same
/// choice, and the CLI's `--transport` maps onto it one to one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// Every PE in this process (virtual PEs, or several GPUs with peer
    /// access). The default.
    #[default]
    InProcess,
    /// One process per MPI rank (`mpirun -n R`), one GPU per rank (device =
    /// node-local rank mod visible GPUs; several ranks may share a GPU),
    /// [`crate::Builder::pes_per_rank`] PEs per rank; peers' memory through
    /// CUDA IPC. Needs the `mpi` cargo feature. Runs are collective: every
    /// rank calls [`crate::Runtime::run`] with the same graph and options,
    /// and so is the first [`crate::Runtime::alloc_symmetric`].
    MpiIpc,
    /// One process per MPI rank (`mpirun -n R`), one GPU and one PE per
    /// rank (`pes_per_rank` must be 1: the PE is the rank's NVSHMEM PE);
    /// peers through NVSHMEM: load/store where `nvshmem_ptr` reaches them,
    /// NVSHMEM puts and signals otherwise (other nodes; every peer with
    /// `AUTARKY_NVSHMEM_FORCE_REMOTE=1`). Needs the `nvshmem` cargo feature
    /// (which implies `mpi`) and NVSHMEM 3 with nvJitLink at run time
    /// (`AUTARKY_NVSHMEM_DIR`, see `runtime::nvshmem::find`). Collective
    /// like [`Transport::MpiIpc`]. A [`crate::runtime::SymBuffer`] copy of a PE that
    /// this process cannot load/store (another node) is refused.
    Nvshmem,
}

impl Transport {
    /// The CLI's name: `"local"`, `"ipc"` or `"nvshmem"`.
    pub fn name(self) -> &'static str {
        match self {
            Transport::InProcess => "local",
            Transport::MpiIpc => "ipc",
            Transport::Nvshmem => "nvshmem",
        }
    }

    /// One process per MPI rank ([`Transport::MpiIpc`], [`Transport::Nvshmem`])?
    pub fn is_multi_process(self) -> bool {
        !matches!(self, Transport::InProcess)
    }
}

/// The rank-level operations a run needs from its transport. One process
/// ([`InProcess`]) implements them as identities; the MPI backend with
/// bounded collectives.
pub(crate) trait Peers: Send + Sync {
    /// This process's rank.
    fn rank(&self) -> u32;
    /// Ranks of the job.
    fn ranks(&self) -> u32;
    /// Every rank's `bytes`, in rank order. Collective: every rank calls it
    /// with the same `what` and the same length, or every rank fails
    /// ([`Error::RanksDisagree`], [`Error::RankTimeout`]).
    fn allgather(&self, what: &str, bytes: &[u8]) -> Result<Vec<Vec<u8>>>;
}

/// The only rank of a one-process run.
pub(crate) struct InProcess;

impl Peers for InProcess {
    fn rank(&self) -> u32 {
        0
    }
    fn ranks(&self) -> u32 {
        1
    }
    fn allgather(&self, _what: &str, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        Ok(vec![bytes.to_vec()])
    }
}

/// The global PEs hosted by `rank` when every rank hosts `per_rank`.
pub(crate) fn local_pes(rank: u32, per_rank: u32) -> Range<u32> {
    rank * per_rank..(rank + 1) * per_rank
}

/// Allocations of every PE, as this process reaches them.
pub(crate) struct Shared {
    /// Every PE's address as this process reaches it (its own for local
    /// PEs, an IPC mapping for the others).
    pub reach: Vec<u64>,
    /// Every PE's address as its own process has it (what task arguments
    /// of that PE carry).
    pub own: Vec<u64>,
    /// The IPC mappings (closed when dropped).
    pub mappings: Vec<DeviceMem>,
}

/// Shares one allocation per local PE (`local[i]` is PE `first + i`'s):
/// exports them, gathers every rank's, and maps the other ranks' into
/// `ctx`. One process: the addresses themselves, nothing mapped.
pub(crate) fn share(
    peers: &dyn Peers,
    ctx: &Context,
    what: &str,
    local: &[&DeviceMem],
) -> Result<Shared> {
    if peers.ranks() == 1 {
        let p: Vec<u64> = local.iter().map(|m| m.ptr()).collect();
        return Ok(Shared {
            reach: p.clone(),
            own: p,
            mappings: Vec::new(),
        });
    }
    let mut bytes = Vec::with_capacity(local.len() * (IpcHandle::ENCODED + 8));
    for m in local {
        bytes.extend_from_slice(&m.ptr().to_le_bytes());
        bytes.extend_from_slice(&m.ipc_handle(ctx)?.to_bytes());
    }
    let all = peers.allgather(what, &bytes)?;
    let mut out = Shared {
        reach: Vec::new(),
        own: Vec::new(),
        mappings: Vec::new(),
    };
    for (r, b) in all.iter().enumerate() {
        for e in b.chunks_exact(IpcHandle::ENCODED + 8) {
            let own = u64::from_le_bytes(e[..8].try_into().expect("8 bytes"));
            out.own.push(own);
            if r as u32 == peers.rank() {
                out.reach.push(own);
            } else {
                let m = DeviceMem::open_ipc(ctx, &IpcHandle::from_bytes(&e[8..]))?;
                out.reach.push(m.ptr());
                out.mappings.push(m);
            }
        }
    }
    Ok(out)
}

/// Fails on every rank when any rank's `local` is an error: the first
/// failing rank's error (its own error on that rank, [`Error::RankFailed`]
/// naming it on the others). `what` names the step.
pub(crate) fn agree_ok<T>(peers: &dyn Peers, what: &str, local: Result<T>) -> Result<T> {
    if peers.ranks() == 1 {
        return local;
    }
    let msg = match &local {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    };
    // Fixed length: the text is cut at 1 KiB.
    let mut b = vec![0u8; 1025];
    b[0] = u8::from(local.is_err());
    let t = msg.as_bytes();
    let n = t.len().min(1024);
    b[1..1 + n].copy_from_slice(&t[..n]);
    let all = peers.allgather(what, &b)?;
    match local {
        Err(e) => Err(e),
        Ok(v) => match all.iter().position(|b| b[0] != 0) {
            None => Ok(v),
            Some(r) => {
                let text = &all[r][1..];
                let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
                Err(Error::RankFailed {
                    rank: r as u32,
                    error: String::from_utf8_lossy(&text[..end]).into_owned(),
                })
            }
        },
    }
}

/// Checks that every rank's `fields` (name, value) are the same as this
/// rank's; the first difference (by rank, then field) is the error, the
/// same on every rank.
pub(crate) fn check_same(
    what: &str,
    all: &[Vec<(&'static str, String)>],
) -> std::result::Result<(), Error> {
    let Some(first) = all.first() else {
        return Ok(());
    };
    for (r, fields) in all.iter().enumerate().skip(1) {
        for ((name, v0), (_, v)) in first.iter().zip(fields) {
            if v0 != v {
                return Err(Error::RanksDisagree {
                    what: what.into(),
                    detail: format!("rank 0 has {name} = {v0}, rank {r} has {name} = {v}"),
                });
            }
        }
    }
    Ok(())
}

/// A fingerprint of a lowered graph and the per-run words every rank must
/// agree on (every PE's tables, the kinds' names and source, the iteration
/// count): two ranks with the same fingerprint launch the same run.
pub(crate) fn run_fingerprint(
    graph: &Graph,
    run: &LoweredRun,
    iterations: u32,
    spread_state: bool,
) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(iterations.to_le_bytes());
    // The state words' layout (RUN_STATE_SPREAD): a producer writes a
    // remote consumer's word at its own spacing, so every rank must agree.
    h.update([spread_state as u8]);
    h.update((run.pes.len() as u64).to_le_bytes());
    for k in graph.kinds() {
        h.update(k.name.as_bytes());
        h.update([0]);
        h.update(k.source.as_bytes());
        h.update([0]);
    }
    for l in &run.pes {
        for part in [
            bytemuck::cast_slice::<_, u8>(&l.tasks),
            bytemuck::cast_slice(&l.succ),
            bytemuck::cast_slice(&l.pred),
            bytemuck::cast_slice(&l.remote),
            bytemuck::cast_slice(&l.pinned),
            &l.args,
            bytemuck::cast_slice(&l.roots),
            bytemuck::cast_slice(&l.comm_roots),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
    }
    h.finalize().into()
}

/// Checks that every rank launches the same run (same fingerprint).
pub(crate) fn check_same_run(peers: &dyn Peers, fingerprint: [u8; 32]) -> Result<()> {
    let all = peers.allgather("run start", &fingerprint)?;
    let hex = |b: &[u8]| {
        b[..8]
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<String>()
    };
    let fields: Vec<Vec<(&'static str, String)>> = all
        .iter()
        .map(|b| vec![("graph fingerprint", hex(b))])
        .collect();
    check_same(
        "the graph of a run (its lowered tables, kinds, iterations and state layout)",
        &fields,
    )
}

/// `fields` as fixed-length bytes (every rank sends the same length).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))] // used by the MPI build
pub(crate) fn encode_fields(fields: &[(&'static str, String)]) -> Vec<u8> {
    let mut b = vec![0u8; FIELDS_BYTES];
    let text: String = fields.iter().map(|(_, v)| format!("{v}\n")).collect();
    let n = text.len().min(FIELDS_BYTES);
    b[..n].copy_from_slice(&text.as_bytes()[..n]);
    b
}

/// The inverse of [`encode_fields`], given the names.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))] // used by the MPI build
pub(crate) fn decode_fields(
    names: &[(&'static str, String)],
    b: &[u8],
) -> Vec<(&'static str, String)> {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let text = String::from_utf8_lossy(&b[..end]);
    let mut vals = text.split('\n');
    names
        .iter()
        .map(|(n, _)| (*n, vals.next().unwrap_or("").to_string()))
        .collect()
}

#[cfg_attr(not(feature = "mpi"), allow(dead_code))] // used by the MPI build
const FIELDS_BYTES: usize = 2048;

/// Checks that every rank has the same `fields` (collective).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))] // used by the MPI build
pub(crate) fn check_same_fields(
    peers: &dyn Peers,
    what: &str,
    fields: &[(&'static str, String)],
) -> Result<()> {
    let all = peers.allgather(what, &encode_fields(fields))?;
    let decoded: Vec<_> = all.iter().map(|b| decode_fields(fields, b)).collect();
    check_same(what, &decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake job: every rank's payload is given up front.
    struct Fake {
        rank: u32,
        others: Vec<Vec<u8>>,
    }
    impl Peers for Fake {
        fn rank(&self) -> u32 {
            self.rank
        }
        fn ranks(&self) -> u32 {
            self.others.len() as u32
        }
        fn allgather(&self, _what: &str, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
            let mut v = self.others.clone();
            v[self.rank as usize] = bytes.to_vec();
            Ok(v)
        }
    }

    #[test]
    fn fields_survive_encoding_and_a_mismatch_is_reported() {
        let mine = vec![("pes_per_rank", "1".to_string()), ("threads", "128".into())];
        let theirs = vec![("pes_per_rank", "2".to_string()), ("threads", "128".into())];
        assert_eq!(decode_fields(&mine, &encode_fields(&mine)), mine);
        let peers = Fake {
            rank: 0,
            others: vec![vec![], encode_fields(&theirs)],
        };
        let e = check_same_fields(&peers, "the configuration", &mine).unwrap_err();
        assert!(e.to_string().contains("rank 1 has pes_per_rank = 2"), "{e}");
    }

    #[test]
    fn mpi_refuses_pes_gpus_device_and_the_emulator_before_touching_mpi() {
        let b = || crate::Runtime::builder().transport(Transport::MpiIpc);
        for (builder, knob) in [
            (b().pes(2), "Builder::pes"),
            (b().gpus(2), "Builder::gpus"),
            (b().device(1), "Builder::device"),
            (b().emulator(2), "Builder::emulator"),
        ] {
            match builder.build() {
                Err(Error::Unsupported { option, .. }) => assert_eq!(option, knob),
                other => panic!("{knob}: expected Unsupported, got {other:?}"),
            }
        }
        let e = b().pes_per_rank(0).build().unwrap_err();
        assert!(e.to_string().contains("pes_per_rank"), "{e}");
    }

    #[cfg(not(feature = "mpi"))]
    #[test]
    fn without_the_mpi_feature_the_transport_says_how_to_get_it() {
        let e = crate::Runtime::builder()
            .transport(Transport::MpiIpc)
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("--features mpi"), "{e}");
    }

    #[test]
    fn nvshmem_refuses_more_than_one_pe_per_rank_and_the_mpi_refusals_before_touching_mpi() {
        let b = || crate::Runtime::builder().transport(Transport::Nvshmem);
        match b().pes_per_rank(2).build() {
            Err(Error::Unsupported { option, reason, .. }) => {
                assert_eq!(option, "Builder::pes_per_rank");
                assert!(reason.contains("one NVSHMEM PE"), "{reason}");
            }
            other => panic!("expected Unsupported, got {other:?}"),
        }
        match b().gpus(2).build() {
            Err(Error::Unsupported { option, .. }) => assert_eq!(option, "Builder::gpus"),
            other => panic!("expected Unsupported, got {other:?}"),
        }
        assert_eq!(Transport::Nvshmem.name(), "nvshmem");
        assert!(Transport::Nvshmem.is_multi_process() && !Transport::InProcess.is_multi_process());
    }

    #[cfg(not(feature = "nvshmem"))]
    #[test]
    fn without_the_nvshmem_feature_the_transport_says_how_to_get_it() {
        let e = crate::Runtime::builder()
            .transport(Transport::Nvshmem)
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("--features nvshmem"), "{e}");
    }

    #[test]
    fn local_pes_are_consecutive_blocks_of_pes_per_rank() {
        assert_eq!(local_pes(0, 2), 0..2);
        assert_eq!(local_pes(3, 2), 6..8);
    }

    #[test]
    fn check_same_names_the_first_rank_and_field_that_differ() {
        let a = vec![("pes_per_rank", "1".to_string()), ("threads", "128".into())];
        let b = vec![("pes_per_rank", "1".to_string()), ("threads", "256".into())];
        assert!(check_same("cfg", &[a.clone(), a.clone()]).is_ok());
        let e = check_same("cfg", &[a.clone(), a, b])
            .unwrap_err()
            .to_string();
        assert!(e.contains("rank 2 has threads = 256"), "{e}");
        assert!(e.contains("rank 0 has threads = 128"), "{e}");
    }

    #[test]
    fn a_failure_on_another_rank_fails_this_rank_naming_it() {
        let mut failing = vec![0u8; 1025];
        failing[0] = 1;
        failing[1..6].copy_from_slice(b"boom!");
        let peers = Fake {
            rank: 0,
            others: vec![vec![0; 1025], failing],
        };
        let e = agree_ok(&peers, "boot", Ok(())).unwrap_err();
        match e {
            Error::RankFailed { rank, error } => {
                assert_eq!(rank, 1);
                assert_eq!(error, "boom!");
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn a_local_failure_is_returned_as_is() {
        let peers = Fake {
            rank: 1,
            others: vec![vec![0; 1025], vec![0; 1025]],
        };
        let e = agree_ok::<()>(&peers, "boot", Err(Error::InvalidConfig("x".into()))).unwrap_err();
        assert!(matches!(e, Error::InvalidConfig(_)));
    }

    #[test]
    fn different_graphs_have_different_fingerprints_and_fail_the_check() {
        use crate::TaskKind;
        let mk = |n: usize| {
            let mut g = Graph::new();
            let k = g
                .add_kind(TaskKind::new(
                    "noop",
                    "__device__ void noop(autarky::TaskCtx&) {}",
                ))
                .unwrap();
            for _ in 0..n {
                g.add_task_bytes(k, &[]);
            }
            g
        };
        let lim = crate::graph::Limits {
            num_pes: 1,
            max_tasks: 1 << 20,
            ..crate::graph::Limits::default()
        };
        let (g1, g2) = (mk(2), mk(3));
        let f1 = run_fingerprint(&g1, &g1.lower_run(&lim).unwrap(), 10, false);
        let f1b = run_fingerprint(&g1, &g1.lower_run(&lim).unwrap(), 10, false);
        let f2 = run_fingerprint(&g2, &g2.lower_run(&lim).unwrap(), 10, false);
        let f3 = run_fingerprint(&g1, &g1.lower_run(&lim).unwrap(), 11, false);
        let f4 = run_fingerprint(&g1, &g1.lower_run(&lim).unwrap(), 10, true);
        assert_eq!(f1, f1b);
        assert_ne!(f1, f2);
        assert_ne!(f1, f3);
        assert_ne!(f1, f4, "the state layout is part of the run");
        let peers = Fake {
            rank: 0,
            others: vec![vec![], f2.to_vec()],
        };
        let e = check_same_run(&peers, f1).unwrap_err();
        assert!(matches!(e, Error::RanksDisagree { .. }), "{e}");
        let peers = Fake {
            rank: 0,
            others: vec![vec![], f1.to_vec()],
        };
        check_same_run(&peers, f1).unwrap();
    }
}
