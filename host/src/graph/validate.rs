//! Graph validation: every check that must pass before a launch, each with
//! its own error variant.

use super::Graph;

/// Limits a graph is validated against (they come from the runtime).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// PEs in the run; every task's PE must be below this.
    pub num_pes: u32,
    /// Ready-queue capacity: the most tasks a graph may have.
    pub max_tasks: usize,
    /// Dynamic tasks with at least this many predecessor edges are counted
    /// ([`autarky_shared::RunParams::counted_fan_in`]); at least 2.
    pub counted_fan_in: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            num_pes: 1,
            max_tasks: 1 << 24,
            counted_fan_in: autarky_shared::COUNTED_FAN_IN_DEFAULT,
        }
    }
}

/// Why a graph cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    /// The graph has no tasks.
    #[error("the graph has no tasks")]
    Empty,
    /// Distance-0 edges form a cycle: no instance of these tasks could ever start.
    #[error("distance-0 edges form a cycle: {}", .labels.join(" → "))]
    Cycle {
        /// Task ids around the cycle, first repeated at the end.
        tasks: Vec<u32>,
        /// The same as printable labels.
        labels: Vec<String>,
    },
    /// An edge names a task that does not exist.
    #[error("edge {from} → {to} names task #{missing}, but the graph has {tasks} task{}", if *.tasks == 1 { "" } else { "s" })]
    MissingTask {
        /// Edge source as given.
        from: u32,
        /// Edge target as given.
        to: u32,
        /// The id that does not exist.
        missing: u32,
        /// Number of tasks.
        tasks: usize,
    },
    /// An edge distance above [`autarky_shared::MAX_DISTANCE`].
    #[error("edge {from} → {to} has distance {distance}; at most {max} is supported", max = autarky_shared::MAX_DISTANCE)]
    BadDistance {
        /// Edge source.
        from: String,
        /// Edge target.
        to: String,
        /// The distance given.
        distance: u32,
    },
    /// A task placed on a PE the run does not have.
    #[error("task {task} is placed on PE {pe}, but the run has {num_pes} PE(s)")]
    PeOutOfRange {
        /// The task.
        task: String,
        /// Its PE.
        pe: u32,
        /// PEs in the run.
        num_pes: u32,
    },
    /// A task's argument bytes do not match its kind's declared size.
    #[error(
        "task {task} of kind `{kind}` has {got} argument bytes, but the kind declares {expected}"
    )]
    ArgSize {
        /// The task.
        task: String,
        /// Its kind.
        kind: String,
        /// Declared size.
        expected: usize,
        /// Size given.
        got: usize,
    },
    /// A task names a kind that is not registered in this graph.
    #[error("task {task} uses kind #{kind}, but the graph registers {kinds} kind(s)")]
    UnknownKind {
        /// The task.
        task: String,
        /// The kind index.
        kind: u32,
        /// Kinds registered.
        kinds: usize,
    },
    /// A kind with this name is already registered in the graph.
    #[error("task kind `{name}` is registered twice")]
    DuplicateKind {
        /// The name.
        name: String,
    },
    /// A kind name that cannot name a device function.
    #[error("task kind name `{name}` {reason}")]
    BadKindName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A block shape the megakernel cannot be launched with.
    #[error("threads per block must be a multiple of 32 in 32..=1024, got {threads}")]
    BadThreadsPerBlock {
        /// The value given.
        threads: u32,
    },
    /// More tasks than the ready queue can hold.
    #[error("the graph has {tasks} task{}, but the ready queue holds at most {capacity}; raise Builder::max_tasks", if *.tasks == 1 { "" } else { "s" })]
    TooManyTasks {
        /// Tasks in the graph.
        tasks: usize,
        /// Queue capacity.
        capacity: usize,
    },
}

impl Graph {
    /// Checks everything that must hold before a launch.
    pub fn validate(&self, limits: &Limits) -> Result<(), GraphError> {
        let n = self.tasks.len();
        if n == 0 {
            return Err(GraphError::Empty);
        }
        if n > limits.max_tasks {
            return Err(GraphError::TooManyTasks {
                tasks: n,
                capacity: limits.max_tasks,
            });
        }
        for (i, t) in self.tasks.iter().enumerate() {
            let Some(kind) = self.kinds.get(t.kind.index()) else {
                return Err(GraphError::UnknownKind {
                    task: self.label(i as u32),
                    kind: t.kind.0,
                    kinds: self.kinds.len(),
                });
            };
            if t.arg_len != kind.arg_size {
                return Err(GraphError::ArgSize {
                    task: self.label(i as u32),
                    kind: kind.name.clone(),
                    expected: kind.arg_size,
                    got: t.arg_len,
                });
            }
            if t.pe >= limits.num_pes {
                return Err(GraphError::PeOutOfRange {
                    task: self.label(i as u32),
                    pe: t.pe,
                    num_pes: limits.num_pes,
                });
            }
        }
        for e in &self.edges {
            for id in [e.from, e.to] {
                if id.index() >= n {
                    return Err(GraphError::MissingTask {
                        from: e.from.0,
                        to: e.to.0,
                        missing: id.0,
                        tasks: n,
                    });
                }
            }
            if e.distance > autarky_shared::MAX_DISTANCE {
                return Err(GraphError::BadDistance {
                    from: self.label(e.from.0),
                    to: self.label(e.to.0),
                    distance: e.distance,
                });
            }
        }
        if let Some(cycle) = self.find_zero_distance_cycle() {
            return Err(GraphError::Cycle {
                labels: cycle.iter().map(|&t| self.label(t)).collect(),
                tasks: cycle,
            });
        }
        Ok(())
    }

    /// A cycle among distance-0 edges, as task ids with the first repeated
    /// at the end, or `None`. Iterative DFS (graphs may be deep chains).
    fn find_zero_distance_cycle(&self) -> Option<Vec<u32>> {
        let n = self.tasks.len();
        let mut adj_start = vec![0usize; n + 1];
        for e in self.edges.iter().filter(|e| e.distance == 0) {
            adj_start[e.from.index() + 1] += 1;
        }
        for i in 0..n {
            adj_start[i + 1] += adj_start[i];
        }
        let mut fill = adj_start.clone();
        let mut adj = vec![0u32; adj_start[n]];
        for e in self.edges.iter().filter(|e| e.distance == 0) {
            adj[fill[e.from.index()]] = e.to.0;
            fill[e.from.index()] += 1;
        }
        // 0 = unvisited, 1 = on the DFS stack, 2 = finished.
        let mut color = vec![0u8; n];
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for root in 0..n {
            if color[root] != 0 {
                continue;
            }
            color[root] = 1;
            stack.push((root as u32, adj_start[root]));
            while let Some(&mut (v, ref mut next)) = stack.last_mut() {
                if *next < adj_start[v as usize + 1] {
                    let w = adj[*next];
                    *next += 1;
                    match color[w as usize] {
                        0 => {
                            color[w as usize] = 1;
                            stack.push((w, adj_start[w as usize]));
                        }
                        1 => {
                            let pos = stack.iter().position(|&(u, _)| u == w).unwrap();
                            let mut cycle: Vec<u32> =
                                stack[pos..].iter().map(|&(u, _)| u).collect();
                            cycle.push(w);
                            return Some(cycle);
                        }
                        _ => {}
                    }
                } else {
                    color[v as usize] = 2;
                    stack.pop();
                }
            }
        }
        None
    }
}
