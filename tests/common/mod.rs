//! Shared helpers for GPU tests: skip without a GPU (with a printed reason),
//! fail instead when AUTARKY_REQUIRE_GPU=1.
#![allow(dead_code)]

use std::time::Duration;

use autarky::runtime::driver::DeviceMem;
use autarky::{Error, Graph, Runtime, TaskKind};

pub fn require_gpu() -> bool {
    std::env::var("AUTARKY_REQUIRE_GPU").as_deref() == Ok("1")
}

/// A GPU runtime, or `None` (after printing why) when there is no GPU and
/// the environment does not require one.
pub fn gpu(test: &str) -> Option<Runtime> {
    gpu_with(
        test,
        Runtime::builder().gpu().timeout(Duration::from_secs(10)),
    )
}

pub fn gpu_with(test: &str, b: autarky::runtime::Builder) -> Option<Runtime> {
    match b.build() {
        Ok(rt) => Some(rt),
        Err(e @ (Error::NoGpu { .. } | Error::NvrtcNotFound { .. })) if !require_gpu() => {
            eprintln!("SKIP {test}: {e}");
            None
        }
        Err(e) => panic!("{test}: GPU required but unavailable: {e}"),
    }
}

/// Device u64 buffer, poisoned with 0xff bytes.
pub fn poisoned(rt: &Runtime, n: usize) -> DeviceMem {
    let m = DeviceMem::alloc(rt.context().unwrap(), n * 8).unwrap();
    m.fill_bytes(0xff).unwrap();
    m
}

pub fn zeroed(rt: &Runtime, n: usize) -> DeviceMem {
    let m = DeviceMem::alloc(rt.context().unwrap(), n * 8).unwrap();
    m.fill_bytes(0).unwrap();
    m
}

pub fn download_u64(m: &DeviceMem, n: usize) -> Vec<u64> {
    let mut v = vec![0u64; n];
    m.download(&mut v).unwrap();
    v
}

/// Arguments of the `logged` kind.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LogArgs {
    pub log: u64,     // u64[2 * tasks * iterations]: (start, end) sequence numbers
    pub count: u64,   // u32[tasks * iterations]: times each instance ran
    pub counter: u64, // u64: global sequence counter
    pub iterations: u32,
    pub _pad: u32,
}

/// Every instance takes a start and an end sequence number from one global
/// counter and counts its executions.
pub const LOGGED_SRC: &str = r#"
struct LogArgs { unsigned long long* log; unsigned* count; unsigned long long* counter; unsigned iterations; unsigned pad; };
__device__ void logged(autarky::TaskCtx& ctx) {
    if (threadIdx.x != 0) return;
    const LogArgs& a = ctx.args<LogArgs>();
    const unsigned long long slot = (unsigned long long)ctx.task * a.iterations + ctx.iteration;
    const unsigned long long start = atomicAdd(a.counter, 1ull);
    atomicAdd(&a.count[slot], 1u);
    __threadfence();
    const unsigned long long end = atomicAdd(a.counter, 1ull);
    a.log[2 * slot] = start;
    a.log[2 * slot + 1] = end;
}
"#;

pub fn logged_kind() -> TaskKind {
    TaskKind::new("logged", LOGGED_SRC).args::<LogArgs>()
}

/// A graph instrumented with the `logged` kind, with its device buffers.
pub struct Logged {
    pub log: DeviceMem,
    pub count: DeviceMem,
    pub counter: DeviceMem,
    pub tasks: usize,
    pub iterations: u32,
}

impl Logged {
    pub fn new(rt: &Runtime, tasks: usize, iterations: u32) -> Logged {
        let n = tasks * iterations as usize;
        let log = poisoned(rt, 2 * n);
        let count = DeviceMem::alloc(rt.context().unwrap(), n * 4).unwrap();
        count.fill_bytes(0).unwrap();
        let counter = zeroed(rt, 1);
        Logged {
            log,
            count,
            counter,
            tasks,
            iterations,
        }
    }

    pub fn args(&self) -> LogArgs {
        LogArgs {
            log: self.log.ptr(),
            count: self.count.ptr(),
            counter: self.counter.ptr(),
            iterations: self.iterations,
            _pad: 0,
        }
    }

    /// Checks that every instance ran exactly once and after every
    /// instance it depends on (including its own previous instance).
    pub fn check(&self, g: &Graph) {
        let n = self.tasks * self.iterations as usize;
        let log = download_u64(&self.log, 2 * n);
        let mut count = vec![0u32; n];
        self.count.download(&mut count).unwrap();
        let it = self.iterations as usize;
        for (slot, &c) in count.iter().enumerate() {
            assert_eq!(
                c,
                1,
                "instance (task {}, iteration {}) ran {c} times",
                slot / it,
                slot % it
            );
        }
        let start = |t: usize, i: usize| log[2 * (t * it + i)];
        let end = |t: usize, i: usize| log[2 * (t * it + i) + 1];
        for t in 0..self.tasks {
            for i in 1..it {
                assert!(
                    start(t, i) > end(t, i - 1),
                    "task {t}: instance {i} started before {} ended",
                    i - 1
                );
            }
        }
        for e in g.edges() {
            let (p, s, d) = (e.from.index(), e.to.index(), e.distance as usize);
            for i in d..it {
                assert!(
                    start(s, i) > end(p, i - d),
                    "task {s} iteration {i} started (seq {}) before task {p} iteration {} ended (seq {})",
                    start(s, i),
                    i - d,
                    end(p, i - d)
                );
            }
        }
    }
}

/// Tiny deterministic PRNG (xorshift64*), so failures reproduce.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
