//! Task graphs: kinds, tasks, edges.
//!
//! A graph is a set of tasks with edges. An edge `(p → s, distance d)` means
//! instance `i` of `s` needs instance `i − d` of `p`, with `d ∈ {0, 1}`
//! (distance 1 is a loop-carried edge). Every instance of a task also runs
//! after the previous instance of the same task (an implicit self edge). A
//! graph runs for a fixed number of iterations and is never unrolled.
//!
//! Registering a kind checks its name ([`Graph::add_kind`] returns an
//! error); adding tasks and edges is infallible except for documented
//! panics on ids out of this graph's range. Ids are indices: a kind or
//! task id from another graph that is in range here names this graph's
//! kind or task (not detected). Every property of the
//! graph as a whole (cycles, dangling edges, distances, PEs, argument
//! sizes, capacity) is checked by
//! [`Graph::validate`] before any launch, each with its own error.

mod kind;
mod lower;
mod validate;

pub use kind::{CpuBody, CpuCtx, KindId, TaskKind};
pub use lower::{
    LoweredGraph, LoweredRun, PROXY_KIND, ROUND_PREDS, ROUND_TASKS, SOLO_PREDS, SOLO_WIDE_PREDS,
};
pub use validate::{GraphError, Limits};

/// Index of a task in its [`Graph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub(crate) u32);

impl TaskId {
    /// The task id with this index. Ids are dense, in insertion order; an id
    /// that names no task of the graph is reported by validation.
    ///
    /// # Panics
    /// If `index` does not fit in a `u32` (no graph has that many tasks).
    pub fn from_index(index: usize) -> Self {
        TaskId(u32::try_from(index).expect("task index exceeds u32"))
    }
    /// This id's index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for TaskId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Task {
    pub kind: KindId,
    pub pe: u32,
    /// Byte range in `Graph::args`.
    pub arg_offset: usize,
    pub arg_len: usize,
    pub name: Option<String>,
    /// Pinned to this block slot of its PE's blocks of its role.
    pub pin: Option<u32>,
}

/// An edge as the user added it (validated later).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeSpec {
    /// Predecessor.
    pub from: TaskId,
    /// Successor.
    pub to: TaskId,
    /// Iteration distance: instance `i` of `to` needs instance `i - distance` of `from`.
    pub distance: u32,
}

/// A task graph under construction.
#[derive(Clone, Default)]
pub struct Graph {
    pub(crate) kinds: Vec<TaskKind>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) edges: Vec<EdgeSpec>,
    /// Argument arena: every task's argument bytes, each at a 16-aligned offset.
    pub(crate) args: Vec<u8>,
    /// Threads per block this graph's megakernel is launched with (None:
    /// the runtime's).
    pub(crate) threads_per_block: Option<u32>,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("kinds", &self.kinds.len())
            .field("tasks", &self.tasks.len())
            .field("edges", &self.edges.len())
            .field("threads_per_block", &self.threads_per_block)
            .finish()
    }
}

/// Alignment of every task's arguments in the arena (bytes).
pub const ARG_ALIGN: usize = 16;

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a task kind and returns its id.
    ///
    /// Errors: [`GraphError::DuplicateKind`] when a kind with the same name
    /// is already registered; [`GraphError::BadKindName`] when the name is
    /// not a C identifier, is a C/C++ keyword, or is reserved.
    pub fn add_kind(&mut self, kind: TaskKind) -> Result<KindId, GraphError> {
        kind::check_kind_name(&kind.name)?;
        if self.kinds.iter().any(|k| k.name == kind.name) {
            return Err(GraphError::DuplicateKind { name: kind.name });
        }
        self.kinds.push(kind);
        Ok(KindId((self.kinds.len() - 1) as u32))
    }

    /// Adds a task of `kind` with typed arguments. Validation checks that
    /// `size_of::<T>()` equals the kind's declared argument size.
    pub fn add_task<T: bytemuck::Pod>(&mut self, kind: KindId, args: &T) -> TaskId {
        self.add_task_bytes(kind, bytemuck::bytes_of(args))
    }

    /// Adds a task of `kind` with raw argument bytes.
    pub fn add_task_bytes(&mut self, kind: KindId, args: &[u8]) -> TaskId {
        let arg_offset = self.args.len().next_multiple_of(ARG_ALIGN);
        self.args.resize(arg_offset, 0);
        self.args.extend_from_slice(args);
        self.tasks.push(Task {
            kind,
            pe: 0,
            arg_offset,
            arg_len: args.len(),
            name: None,
            pin: None,
        });
        TaskId((self.tasks.len() - 1) as u32)
    }

    /// Launches this graph's megakernel with `threads` per block instead of
    /// the runtime's [`Builder::threads_per_block`](crate::Builder::threads_per_block):
    /// for graphs whose bodies (and tiling) are written for a block shape —
    /// the Jacobi solver's temporal-blocking tiles on small grids run one
    /// work item per warp, eight warps a block. The block count follows
    /// from it (fewer, larger blocks per SM), so size pinned slots with
    /// [`Runtime::blocks_per_pe_of`](crate::Runtime::blocks_per_pe_of). The
    /// emulator compiles the CUDA source it checks for this shape too.
    ///
    /// Errors: [`GraphError::BadThreadsPerBlock`] unless `threads` is a
    /// multiple of 32 in 32..=1024.
    pub fn set_threads_per_block(&mut self, threads: u32) -> Result<&mut Self, GraphError> {
        if !(32..=1024).contains(&threads) || threads % 32 != 0 {
            return Err(GraphError::BadThreadsPerBlock { threads });
        }
        self.threads_per_block = Some(threads);
        Ok(self)
    }

    /// The block shape set by [`Graph::set_threads_per_block`] (None: the
    /// runtime's).
    pub fn threads_per_block(&self) -> Option<u32> {
        self.threads_per_block
    }

    /// Places `task` on `pe` (default 0).
    ///
    /// # Panics
    /// If `task` is not a task of this graph.
    pub fn set_pe(&mut self, task: TaskId, pe: u32) -> &mut Self {
        self.task_mut(task).pe = pe;
        self
    }

    /// Pins `task` to block slot `slot` of its PE: the `slot`-th compute
    /// block (or comm block, for a comm-role kind) runs every instance of
    /// it, in a fixed order with the slot's other pinned tasks, waiting for
    /// each instance's predecessors by polling their progress — no queue, no
    /// claim. A stencil tile pinned to a block keeps its data in that SM's
    /// caches. A slot the run does not have is an error at launch.
    ///
    /// One tile a block is fastest where the blocks suffice (its state held in
    /// registers: [`LoweredGraph::solo_preds`]); with more tiles than
    /// blocks, pin neighbouring tiles to the same slot as a patch — two to
    /// [`ROUND_TASKS`] tasks that wait for nothing of
    /// their own iteration from outside the slot run an iteration at a time,
    /// one poll and one release for the patch
    /// ([`LoweredGraph::is_round_list`]).
    ///
    /// # Panics
    /// If `task` is not a task of this graph.
    pub fn pin(&mut self, task: TaskId, slot: u32) -> &mut Self {
        self.task_mut(task).pin = Some(slot);
        self
    }

    /// Where `task` is pinned, if it is. # Panics: if `task` is not in this graph.
    pub fn pinned(&self, task: TaskId) -> Option<u32> {
        self.tasks[task.index()].pin
    }

    /// `task`'s PE. # Panics: if `task` is not in this graph.
    pub fn pe_of(&self, task: TaskId) -> u32 {
        self.tasks[task.index()].pe
    }

    /// `task`'s name, if it was given one ([`Graph::set_name`]).
    /// # Panics: if `task` is not in this graph.
    pub fn name(&self, task: TaskId) -> Option<&str> {
        self.tasks[task.index()].name.as_deref()
    }

    /// Gives `task` a name used in error messages and traces.
    ///
    /// # Panics
    /// If `task` is not a task of this graph.
    pub fn set_name(&mut self, task: TaskId, name: impl Into<String>) -> &mut Self {
        self.task_mut(task).name = Some(name.into());
        self
    }

    /// Instance `i` of `to` runs after instance `i` of `from`.
    pub fn add_edge(&mut self, from: TaskId, to: TaskId) -> &mut Self {
        self.add_edge_with_distance(from, to, 0)
    }

    /// Instance `i` of `to` runs after instance `i - 1` of `from` (a
    /// loop-carried edge; instance 0 of `to` does not wait for `from`).
    pub fn add_carried_edge(&mut self, from: TaskId, to: TaskId) -> &mut Self {
        self.add_edge_with_distance(from, to, 1)
    }

    /// An edge with an explicit distance `d`: instance `i` of `to` runs
    /// after instance `i - d` of `from` (none for `i < d`). Validation
    /// accepts `d` up to [`autarky_shared::MAX_DISTANCE`].
    pub fn add_edge_with_distance(&mut self, from: TaskId, to: TaskId, distance: u32) -> &mut Self {
        self.edges.push(EdgeSpec { from, to, distance });
        self
    }

    /// Number of tasks.
    pub fn num_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// Number of edges as added (before deduplication).
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// Registered kinds, in id order.
    pub fn kinds(&self) -> &[TaskKind] {
        &self.kinds
    }

    /// Edges as added.
    pub fn edges(&self) -> &[EdgeSpec] {
        &self.edges
    }

    /// `task`'s kind. # Panics: if `task` is not in this graph.
    pub fn task_kind(&self, task: TaskId) -> KindId {
        self.tasks[task.index()].kind
    }

    /// `task`'s argument bytes. # Panics: if `task` is not in this graph.
    pub fn task_args(&self, task: TaskId) -> &[u8] {
        let t = &self.tasks[task.index()];
        &self.args[t.arg_offset..t.arg_offset + t.arg_len]
    }

    /// A printable label: `#3 (name)` or `#3`.
    pub fn label(&self, task: u32) -> String {
        match self
            .tasks
            .get(task as usize)
            .and_then(|t| t.name.as_deref())
        {
            Some(n) => format!("#{task} ({n})"),
            None => format!("#{task}"),
        }
    }

    fn task_mut(&mut self, task: TaskId) -> &mut Task {
        let n = self.tasks.len();
        self.tasks
            .get_mut(task.index())
            .unwrap_or_else(|| panic!("task {task} is not in this graph ({n} tasks)"))
    }
}
