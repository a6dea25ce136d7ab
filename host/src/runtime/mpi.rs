//! The MPI side of [`Transport::MpiIpc`](super::Transport::MpiIpc): one
//! MPI session per process, and collectives that cannot hang.
//!
//! MPI is initialized (threading `Serialized`) by the first MPI runtime of
//! the process and finalized at process exit (an `atexit` hook), so that
//! several runtimes may be built and dropped in one process. All MPI calls
//! go through [`Session`]'s mutex (that is what `Serialized` requires).
//!
//! Every collective is nonblocking (`MPI_Iallgather`) and polled against a
//! deadline ([`crate::Builder::rank_timeout`]): a rank that died or never
//! arrives ends the others with [`Error::RankTimeout`] instead of a hang.
//! A timed-out request cannot be cancelled (MPI forbids cancelling
//! collectives); its buffers are leaked and it is remembered, and at exit
//! the hook waits a few seconds for it and calls `MPI_Abort` if it is still
//! pending (finalizing with a pending collective would hang).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use mpi::collective::CommunicatorCollectives;
use mpi::request::StaticScope;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::AsRaw;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};

use super::transport::Peers;
use crate::{Error, Result};

/// The process's MPI state.
pub(crate) struct Session {
    inner: Mutex<Inner>,
    rank: u32,
    ranks: u32,
    local_rank: u32,
}

struct Inner {
    /// autarky's own communicator (a duplicate of the world), so that its
    /// collectives never match the application's.
    comm: SimpleCommunicator,
    /// Requests that timed out, still pending.
    pending: Vec<mpi::ffi::MPI_Request>,
}

// SAFETY: MPI was initialized with MPI_THREAD_SERIALIZED (checked in
// `Session::get`): any thread may make MPI calls as long as no two do at
// once. Every call on `comm` is made with the `inner` mutex held.
unsafe impl Send for Inner {}

static SESSION: OnceLock<std::result::Result<Arc<Session>, String>> = OnceLock::new();
static POISONED: AtomicBool = AtomicBool::new(false);

extern "C" {
    fn atexit(cb: extern "C" fn()) -> std::ffi::c_int;
}

/// At exit: finalize MPI, unless a collective is still pending after a
/// few seconds (then abort the job: MPI_Finalize would wait forever).
extern "C" fn finalize_at_exit() {
    let Some(Ok(s)) = SESSION.get() else {
        return;
    };
    let mut inner = s.inner.lock();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !inner.pending.is_empty() && Instant::now() < deadline {
        inner.pending.retain_mut(|r| {
            let mut done = 0;
            // SAFETY: `r` is an active request from MPI_Iallgather whose
            // buffers were leaked (live for the process); `done` and the
            // ignored status are valid out-pointers.
            unsafe { mpi::ffi::MPI_Test(r, &mut done, mpi::ffi::RSMPI_STATUS_IGNORE) };
            done == 0
        });
        std::thread::sleep(Duration::from_millis(1));
    }
    if !inner.pending.is_empty() {
        eprintln!(
            "autarky: an MPI exchange never completed (a rank is gone); aborting the MPI job"
        );
        // SAFETY: MPI is initialized and not finalized.
        unsafe { mpi::ffi::MPI_Abort(inner.comm.as_raw(), 1) };
        return;
    }
    // SAFETY: MPI is initialized, not yet finalized (only this hook
    // finalizes, once), and no request of ours is pending.
    unsafe { mpi::ffi::MPI_Finalize() };
}

impl Session {
    /// The process's session, initializing MPI on first use.
    pub(crate) fn get() -> Result<Arc<Session>> {
        SESSION
            .get_or_init(|| Session::init().map(Arc::new))
            .clone()
            .map_err(Error::Mpi)
    }

    fn init() -> std::result::Result<Session, String> {
        if mpi::environment::is_initialized() {
            return Err("MPI was initialized before autarky's first MPI runtime; let autarky initialize it (build the runtime first) or do not initialize it yourself".into());
        }
        let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Serialized)
            .ok_or("MPI_Init_thread failed")?;
        if level < mpi::Threading::Serialized {
            return Err(format!(
                "this MPI provides thread level {level:?}, autarky needs Serialized"
            ));
        }
        let world = universe.world();
        let comm = world.duplicate();
        let node = world.split_shared(world.rank());
        let s = Session {
            rank: comm.rank() as u32,
            ranks: comm.size() as u32,
            local_rank: node.rank() as u32,
            inner: Mutex::new(Inner {
                comm,
                pending: Vec::new(),
            }),
        };
        // Universe's Drop would finalize MPI now; the atexit hook does it at
        // exit instead, after every runtime is gone.
        std::mem::forget(universe);
        // SAFETY: registering a plain extern "C" function with no captures.
        if unsafe { atexit(finalize_at_exit) } != 0 {
            return Err("could not register the MPI finalize hook (atexit)".into());
        }
        Ok(s)
    }

    /// This process's rank in the job.
    pub(crate) fn rank(&self) -> u32 {
        self.rank
    }

    /// Ranks of the job.
    pub(crate) fn ranks(&self) -> u32 {
        self.ranks
    }

    /// Rank among the ranks on this node (picks the GPU).
    pub(crate) fn local_rank(&self) -> u32 {
        self.local_rank
    }

    /// One `MPI_Iallgather` of `bytes` (the same length on every rank),
    /// polled until `bound` has passed.
    ///
    /// # Panics
    ///
    /// If `bytes` is empty (a programmer error: [`MpiPeers::allgather`]
    /// never exchanges an empty payload). An empty slice's pointer is
    /// dangling, `1` for bytes, and Open MPI defines `MPI_IN_PLACE` as
    /// `(void *) 1`: `MPI_Iallgather` would read it as an in-place receive
    /// buffer and end the whole job with `MPI_ERR_ARG` (errors are fatal
    /// on our communicator).
    fn bounded_allgather(&self, what: &str, bytes: &[u8], bound: Duration) -> Result<Vec<u8>> {
        assert!(
            !bytes.is_empty(),
            "bounded_allgather of an empty payload (exchange `{what}`): its dangling pointer is MPI_IN_PLACE to Open MPI"
        );
        let mut inner = self.inner.lock();
        let ranks = self.ranks as usize;
        // 'static buffers (leaked now, reclaimed once the request completed)
        // so a request that times out can be left to MPI safely. The
        // receive buffer is exactly ranks × len bytes (rsmpi divides its
        // length by the ranks for the receive count).
        let send_ptr = Box::into_raw(bytes.to_vec().into_boxed_slice());
        let recv_ptr = Box::into_raw(vec![0u8; bytes.len() * ranks].into_boxed_slice());
        // SAFETY: both pointers come from Box::into_raw just above: valid,
        // aligned, initialized, and not aliased (only MPI uses them until
        // they are reclaimed below, or never if the request times out).
        let (send, recv): (&'static [u8], &'static mut [u8]) =
            unsafe { (&*send_ptr, &mut *recv_ptr) };
        let mut req = inner
            .comm
            .immediate_all_gather_into(StaticScope, send, recv);
        let start = Instant::now();
        loop {
            match req.test() {
                Ok(_) => break,
                Err(r) => req = r,
            }
            if start.elapsed() > bound {
                // SAFETY: the request stays active; its buffers are leaked
                // (never reclaimed), so MPI may complete it whenever.
                let (raw, _, _) = unsafe { req.into_raw() };
                inner.pending.push(raw);
                POISONED.store(true, Ordering::Relaxed);
                return Err(Error::RankTimeout {
                    what: what.into(),
                    waited_ms: start.elapsed().as_millis() as u64,
                    ranks: self.ranks,
                });
            }
            if start.elapsed() < Duration::from_millis(1) {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        // SAFETY: the request completed (and was consumed), so neither MPI
        // nor `send`/`recv` touch either buffer any more; both came from
        // Box::into_raw above and are reclaimed once.
        let (out, _send) = unsafe { (Box::from_raw(recv_ptr), Box::from_raw(send_ptr)) };
        Ok(out.into_vec())
    }
}

/// [`Peers`] over MPI with bounded collectives.
pub(crate) struct MpiPeers {
    pub session: Arc<Session>,
    /// How long a rank waits for the others in one exchange.
    pub bound: Duration,
}

impl Peers for MpiPeers {
    fn rank(&self) -> u32 {
        self.session.rank()
    }
    fn ranks(&self) -> u32 {
        self.session.ranks()
    }
    fn allgather(&self, what: &str, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        if POISONED.load(Ordering::Relaxed) {
            return Err(Error::Mpi(format!(
                "exchange `{what}` refused: an earlier exchange timed out, so the ranks are no longer in step; end the job"
            )));
        }
        // Header: which exchange, and how long its payload is.
        let mut hdr = [0u8; 16];
        let tag: [u8; 32] = Sha256::digest(what.as_bytes()).into();
        hdr[..8].copy_from_slice(&tag[..8]);
        hdr[8..].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
        let all = self.session.bounded_allgather(what, &hdr, self.bound)?;
        for (r, h) in all.chunks_exact(16).enumerate() {
            if h[..8] != hdr[..8] {
                return Err(Error::RanksDisagree {
                    what: "the sequence of collective calls".into(),
                    detail: format!(
                        "rank {} is in exchange `{what}`, rank {r} in another one (a run, alloc_symmetric or barrier that not every rank made)",
                        self.rank()
                    ),
                });
            }
            let n = u64::from_le_bytes(h[8..].try_into().expect("8 bytes"));
            if n != bytes.len() as u64 {
                return Err(Error::RanksDisagree {
                    what: format!("the size of exchange `{what}`"),
                    detail: format!(
                        "rank {} sends {} bytes, rank {r} sends {n}",
                        self.rank(),
                        bytes.len()
                    ),
                });
            }
        }
        // Every rank sends `bytes.len()` bytes (checked above). An empty
        // payload (a barrier) is not exchanged: the header exchange already
        // waited for every rank, and an empty slice must never reach MPI
        // (`bounded_allgather` says why).
        if bytes.is_empty() {
            return Ok(vec![Vec::new(); self.ranks() as usize]);
        }
        let flat = self.session.bounded_allgather(what, bytes, self.bound)?;
        Ok(flat.chunks_exact(bytes.len()).map(<[u8]>::to_vec).collect())
    }
}

/// The exchange layer on 2 or more real MPI ranks, no GPU needed. Ignored
/// by a plain `cargo test` (they need `mpirun`); `.ci/run` runs them with
/// `mpirun -n 2 <lib test binary> runtime::mpi::tests --ignored
/// --test-threads=1`. Every rank runs them in the same order, one at a
/// time (each test's exchanges are collective).
#[cfg(test)]
mod tests {
    use super::*;

    fn peers() -> MpiPeers {
        let session = Session::get().expect("MPI initializes");
        assert!(
            session.ranks() >= 2,
            "run these tests under `mpirun -n 2` (this job has {} rank)",
            session.ranks()
        );
        MpiPeers {
            session,
            bound: Duration::from_secs(60),
        }
    }

    /// A payload that names its rank and length.
    fn payload(rank: u32, len: usize) -> Vec<u8> {
        (0..len).map(|i| (i as u32 * 31 + rank * 7) as u8).collect()
    }

    /// A zero-length payload (what `Runtime::barrier` sends) must not reach
    /// MPI as an empty slice: its dangling pointer is `(void*)1`, Open MPI's
    /// `MPI_IN_PLACE`, and `MPI_Iallgather` ends the job with MPI_ERR_ARG.
    /// A barrier also waits for the slowest rank.
    #[test]
    #[ignore = "needs mpirun -n 2 (.ci/run runs it)"]
    fn an_empty_exchange_is_a_barrier_that_waits_for_the_slowest_rank() {
        let p = peers();
        for round in 0..3u32 {
            let slow = round % p.ranks();
            let t = Instant::now();
            if p.rank() == slow {
                std::thread::sleep(Duration::from_millis(300));
            }
            let all = p.allgather("barrier", &[]).unwrap();
            assert_eq!(all, vec![Vec::<u8>::new(); p.ranks() as usize]);
            assert!(
                t.elapsed() >= Duration::from_millis(250),
                "rank {} left barrier round {round} after {:?}, before rank {slow} arrived",
                p.rank(),
                t.elapsed()
            );
        }
    }

    /// Exchanges of several sizes back to back, one rank late to each:
    /// every rank gets every rank's bytes, in rank order.
    #[test]
    #[ignore = "needs mpirun -n 2 (.ci/run runs it)"]
    fn back_to_back_exchanges_return_every_ranks_bytes_in_rank_order() {
        let p = peers();
        for (i, len) in [1usize, 16, 0, 1025, 3, 0, 0, 100_000, 8]
            .into_iter()
            .enumerate()
        {
            if p.rank() == (i as u32 % p.ranks()) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let all = p.allgather("sizes", &payload(p.rank(), len)).unwrap();
            let want: Vec<Vec<u8>> = (0..p.ranks()).map(|r| payload(r, len)).collect();
            assert_eq!(all, want, "exchange {i} of {len} bytes");
        }
    }

    /// Ranks that send different lengths (zero on one of them) all fail
    /// with RanksDisagree, and stay in step: the next exchange works.
    #[test]
    #[ignore = "needs mpirun -n 2 (.ci/run runs it)"]
    fn different_lengths_fail_every_rank_and_leave_the_ranks_in_step() {
        let p = peers();
        for lens in [[0usize, 4], [5, 9]] {
            let len = lens[(p.rank() as usize).min(1)];
            match p.allgather("uneven", &payload(p.rank(), len)) {
                Err(Error::RanksDisagree { what, .. }) => {
                    assert!(what.contains("size of exchange `uneven`"), "{what}")
                }
                other => panic!("rank {}: expected RanksDisagree, got {other:?}", p.rank()),
            }
            let all = p.allgather("after", &payload(p.rank(), 2)).unwrap();
            assert_eq!(all[0], payload(0, 2));
        }
    }

    /// Ranks in different exchanges (by name) all fail with RanksDisagree.
    #[test]
    #[ignore = "needs mpirun -n 2 (.ci/run runs it)"]
    fn ranks_in_different_exchanges_all_fail_naming_the_sequence() {
        let p = peers();
        let name = if p.rank() == 0 {
            "run start"
        } else {
            "barrier"
        };
        match p.allgather(name, &[1, 2, 3]) {
            Err(Error::RanksDisagree { what, .. }) => {
                assert!(what.contains("sequence of collective calls"), "{what}")
            }
            other => panic!("rank {}: expected RanksDisagree, got {other:?}", p.rank()),
        }
    }
}
