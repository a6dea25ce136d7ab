//! Task kinds: a CUDA C++ device function (and optionally a Rust body for
//! the CPU emulator) with a declared argument size.

use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use super::GraphError;

/// Index of a registered [`TaskKind`] in its graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KindId(pub(crate) u32);

impl KindId {
    /// This id's index (the dispatch switch's case label).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a CPU body sees of the instance it runs (emulator backend).
#[derive(Clone, Copy)]
pub struct CpuCtx<'a> {
    /// The task's id in the graph ([`crate::TaskId::index`]), as the
    /// device's `ctx.task` (global over PEs).
    pub task: u32,
    /// The task's id in its PE's tables, as the device's `ctx.local`
    /// (compute tasks first, then comm tasks; what error records name).
    pub local: u32,
    /// The same as [`CpuCtx::task`] (kept for code written when `task`
    /// was the PE-local id, which the device calls `local`).
    pub global: u32,
    /// Iteration of this instance.
    pub iteration: u32,
    /// PE of the task.
    pub pe: u32,
    /// Emulated block (worker thread) running it, numbered within its PE.
    pub block: u32,
    /// Iterations of the whole run.
    pub iterations: u32,
    /// The task's argument bytes.
    pub args: &'a [u8],
    /// `finish_at` of this instance, provided by the emulator.
    pub(crate) finish: &'a (dyn Fn(u32) -> Result<(), u32> + Sync),
    /// Every PE's symmetric heap base, as host addresses.
    pub(crate) heaps: &'a [u64],
    /// The emulator's bounded wait (`CpuCtx::wait_geq`).
    pub(crate) wait: &'a (dyn Fn(&AtomicU32, u32, u32) -> Result<(), u32> + Sync),
}

impl std::fmt::Debug for CpuCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuCtx")
            .field("task", &self.task)
            .field("local", &self.local)
            .field("iteration", &self.iteration)
            .field("pe", &self.pe)
            .field("block", &self.block)
            .field("iterations", &self.iterations)
            .field("args", &self.args.len())
            .finish()
    }
}

impl CpuCtx<'_> {
    /// The code a task fails with when its body calls
    /// [`CpuCtx::finish_at`] although its kind was not declared
    /// [`TaskKind::may_finish_early`] (the device's `ctx.finish_at` records
    /// the same).
    pub const FINISH_UNDECLARED: u32 = 0xF1415B;

    /// The arguments as `T`.
    ///
    /// # Panics
    /// If the argument size differs from `size_of::<T>()`.
    pub fn args<T: bytemuck::Pod>(&self) -> T {
        if self.args.len() != std::mem::size_of::<T>() {
            panic!(
                "CpuCtx::args::<{}>: task #{} has {} argument bytes, the type is {} bytes \
                 (the kind's args::<T>() or arg_size_bytes and the body disagree)",
                std::any::type_name::<T>(),
                self.task,
                self.args.len(),
                std::mem::size_of::<T>()
            );
        }
        bytemuck::pod_read_unaligned(self.args)
    }

    /// Ends the run early, like the device's `ctx.finish_at(n)`: every task
    /// of this PE runs its instances below `n` and no more (the PE's limit
    /// is lowered to `max(n, iteration + 1)`, an atomic min; the earliest
    /// limit wins). Exact for every task that depends, through edges, on
    /// this instance. Other PEs keep their own limits: a graph that stops
    /// everywhere has a stopping task on every PE.
    ///
    /// Errors: `Err(CpuCtx::FINISH_UNDECLARED)` when the kind was not declared
    /// [`TaskKind::may_finish_early`]; the task then fails with that code
    /// ([`crate::Error::TaskFailed`]) whether or not the body returns the
    /// error, as on the device.
    pub fn finish_at(&self, n: u32) -> Result<(), u32> {
        (self.finish)(n)
    }

    /// Bounded wait until `*word >= wanted` (wraparound-safe, acquire), like
    /// the device's `ctx.wait_geq`: for bodies that wait on data produced
    /// outside the graph's edges. `word_id` names the word in the error.
    ///
    /// Errors: `Err(CpuCtx::WAIT_ABANDONED)` when the run aborted or the
    /// wait timed out (the run then ends with that abort's cause, or with a
    /// [`crate::Error::DeviceTimeout`]-style timeout naming the word); the
    /// body must return the error at once.
    pub fn wait_geq(&self, word: &AtomicU32, wanted: u32, word_id: u32) -> Result<(), u32> {
        (self.wait)(word, wanted, word_id)
    }

    /// The code [`CpuCtx::wait_geq`] returns when the wait was abandoned.
    pub const WAIT_ABANDONED: u32 = 0xA8A4D0;

    /// The address `local_addr` of this PE's symmetric heap as PE `pe` has
    /// it, like the device's `ctx.peer(ptr, pe)`: every PE's heap has the
    /// same layout, so the address is translated by the heap bases. On the
    /// emulator the result is a host address inside PE `pe`'s registered
    /// heap: borrow it with [`crate::cpu_slice`] / [`crate::cpu_slice_mut`].
    ///
    /// # Panics
    /// If `pe` is not a PE of the run.
    pub fn peer_addr(&self, local_addr: u64, pe: u32) -> u64 {
        let bases = self.heaps;
        let base = |q: u32| {
            *bases
                .get(q as usize)
                .unwrap_or_else(|| panic!("PE {q} is not a PE of the run ({} PEs)", bases.len()))
        };
        base(pe).wrapping_add(local_addr.wrapping_sub(base(self.pe)))
    }
}

/// A Rust task body for the emulator: returns `Err(code)` to fail the run
/// the way `ctx.fail(code)` does on the GPU.
pub type CpuBody = Arc<dyn Fn(&CpuCtx<'_>) -> Result<(), u32> + Send + Sync>;

/// A kind of task: a CUDA C++ device function compiled into the megakernel.
///
/// The source must define `__device__ void NAME(autarky::TaskCtx& ctx)`,
/// where `NAME` is the kind's name. Every thread of the block calls it; it
/// reads its arguments with `ctx.args<T>()`.
///
/// ```
/// use autarky::TaskKind;
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Scale { data: u64, n: u32, factor: f32 }
/// let kind = TaskKind::new("scale", r#"
///     struct Scale { float* data; unsigned n; float factor; };
///     __device__ void scale(autarky::TaskCtx& ctx) {
///         const Scale& a = ctx.args<Scale>();
///         for (unsigned i = threadIdx.x; i < a.n; i += blockDim.x) a.data[i] *= a.factor;
///     }"#).args::<Scale>();
/// assert_eq!(kind.arg_size(), 16);
/// ```
#[derive(Clone)]
pub struct TaskKind {
    pub(crate) name: String,
    pub(crate) source: String,
    pub(crate) arg_size: usize,
    pub(crate) cpu: Option<CpuBody>,
    /// Runs on comm blocks (pulses, signals) instead of compute blocks.
    pub(crate) comm: bool,
    /// Its body may call `ctx.finish_at(n)` (claims then read the limit).
    pub(crate) stops: bool,
}

impl std::fmt::Debug for TaskKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskKind")
            .field("name", &self.name)
            .field("arg_size", &self.arg_size)
            .field("cpu", &self.cpu.is_some())
            .finish()
    }
}

impl TaskKind {
    /// A kind whose device body is the function `name` defined in `source`.
    /// Arguments default to none (size 0). The name is checked when the
    /// kind is registered ([`crate::Graph::add_kind`]): it must be a C
    /// identifier that is not a C/C++ keyword or reserved.
    pub fn new(name: impl Into<String>, source: impl Into<String>) -> Self {
        TaskKind {
            name: name.into(),
            source: source.into(),
            arg_size: 0,
            cpu: None,
            comm: false,
            stops: false,
        }
    }

    /// Declares the argument type: every task of this kind must carry exactly
    /// `size_of::<T>()` argument bytes.
    pub fn args<T: bytemuck::Pod>(mut self) -> Self {
        self.arg_size = std::mem::size_of::<T>();
        self
    }

    /// Declares the argument size in bytes.
    pub fn arg_size_bytes(mut self, size: usize) -> Self {
        self.arg_size = size;
        self
    }

    /// Adds a Rust body, so the kind can run on the CPU emulator.
    pub fn with_cpu<F>(mut self, body: F) -> Self
    where
        F: Fn(&CpuCtx<'_>) -> Result<(), u32> + Send + Sync + 'static,
    {
        self.cpu = Some(Arc::new(body));
        self
    }

    /// Tasks of this kind have the comm role: only comm blocks run them (a
    /// halo pulse, a put with signal), so a compute block never waits on a
    /// link and communication never waits behind a long compute task.
    pub fn comm(mut self) -> Self {
        self.comm = true;
        self
    }

    /// The body may end the run early with `ctx.finish_at(n)` (a
    /// convergence check). Without this declaration the scheduler never
    /// reads the run's limit, and `finish_at` fails the task.
    pub fn may_finish_early(mut self) -> Self {
        self.stops = true;
        self
    }

    /// Does this kind have the comm role?
    pub fn is_comm(&self) -> bool {
        self.comm
    }

    /// The device function's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The CUDA C++ source.
    pub fn source(&self) -> &str {
        &self.source
    }
    /// Declared argument size in bytes.
    pub fn arg_size(&self) -> usize {
        self.arg_size
    }
    /// The emulator body, if any.
    pub fn cpu_body(&self) -> Option<&CpuBody> {
        self.cpu.as_ref()
    }
}

/// C and C++ keywords (C17, C++20, and the CUDA and NVRTC spellings a body
/// might collide with): none can name a device function.
const KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "co_await",
    "co_return",
    "co_yield",
    "compl",
    "concept",
    "const",
    "const_cast",
    "consteval",
    "constexpr",
    "constinit",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Bool",
    "_Complex",
    "_Generic",
    "_Imaginary",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
];

/// Names the generated dispatch function uses itself: its parameters
/// (`ctx`, `kind`) and the runtime's namespace. A kind with one of these
/// names would not compile, or would call the wrong thing.
const RESERVED: &[&str] = &["autarky", "ctx", "kind"];

/// Checks that `name` can be a kind's device function: a C identifier
/// (`[A-Za-z_][A-Za-z0-9_]*`), not a C/C++ keyword, not reserved for the
/// implementation (`__x`, `_X`) or for autarky (`autarky_*`, `ctx`, `kind`).
pub(crate) fn check_kind_name(name: &str) -> Result<(), GraphError> {
    let bad = |reason: &str| {
        Err(GraphError::BadKindName {
            name: name.to_string(),
            reason: reason.to_string(),
        })
    };
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return bad("is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)");
    }
    if KEYWORDS.contains(&name) {
        return bad("is a C/C++ keyword");
    }
    let b = name.as_bytes();
    if b.len() >= 2 && b[0] == b'_' && (b[1] == b'_' || b[1].is_ascii_uppercase()) {
        return bad("is reserved for the compiler (starts with `__` or `_` and a capital)");
    }
    if name.starts_with("autarky_") || RESERVED.contains(&name) {
        return bad("is reserved by autarky (`autarky_*`, `autarky`, `ctx`, `kind`)");
    }
    // Names CUDA gives a meaning a function cannot take (built-in
    // variables; `main`, which cannot be overloaded): NVRTC would fail on
    // the GPU (and on the emulator only where NVRTC is present).
    if CUDA_NAMES.contains(&name) {
        return bad(
            "is a CUDA built-in name (threadIdx, blockIdx, blockDim, gridDim, warpSize, main)",
        );
    }
    Ok(())
}

const CUDA_NAMES: &[&str] = &[
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "main",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_follow_c_identifier_rules() {
        for ok in ["scale", "_x", "a1", "Jacobi2d", "x_"] {
            assert_eq!(check_kind_name(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "1a",
            "no-dash",
            "é",
            "a b",
            "int",
            "class",
            "__x",
            "_X",
            "autarky_k",
            "ctx",
            "kind",
            "autarky",
        ] {
            assert!(check_kind_name(bad).is_err(), "{bad:?} accepted");
        }
    }
}
