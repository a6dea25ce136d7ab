//! Graph validation (one test per error) and lowering tables. Host only.

use autarky::{Graph, GraphError, Limits, TaskId, TaskKind};

fn kind() -> TaskKind {
    TaskKind::new("k", "__device__ void k(autarky::TaskCtx&) {}").arg_size_bytes(4)
}

fn graph(n: usize) -> (Graph, Vec<TaskId>) {
    let mut g = Graph::new();
    let k = g.add_kind(kind()).unwrap();
    let t = (0..n).map(|i| g.add_task(k, &(i as u32))).collect();
    (g, t)
}

fn limits() -> Limits {
    Limits {
        num_pes: 1,
        max_tasks: 1 << 20,
        ..Limits::default()
    }
}

#[test]
fn zero_distance_cycle_is_rejected_and_named() {
    let (mut g, t) = graph(4);
    g.set_name(t[1], "b");
    g.add_edge(t[0], t[1])
        .add_edge(t[1], t[2])
        .add_edge(t[2], t[3])
        .add_edge(t[3], t[1]);
    let e = g.validate(&limits()).unwrap_err();
    match &e {
        GraphError::Cycle { tasks, .. } => assert_eq!(tasks, &vec![1, 2, 3, 1]),
        other => panic!("expected Cycle, got {other:?}"),
    }
    assert_eq!(
        e.to_string(),
        "distance-0 edges form a cycle: #1 (b) → #2 → #3 → #1 (b)"
    );
}

#[test]
fn cycle_through_a_loop_carried_edge_is_allowed() {
    let (mut g, t) = graph(3);
    g.add_edge(t[0], t[1])
        .add_edge(t[1], t[2])
        .add_carried_edge(t[2], t[0]);
    g.validate(&limits()).unwrap();
}

#[test]
fn zero_distance_self_edge_is_a_cycle() {
    let (mut g, t) = graph(1);
    g.add_edge(t[0], t[0]);
    assert!(matches!(
        g.validate(&limits()),
        Err(GraphError::Cycle { .. })
    ));
}

#[test]
fn edge_to_a_missing_task_is_rejected() {
    let (mut g, t) = graph(2);
    g.add_edge(t[0], TaskId::from_index(7));
    let e = g.validate(&limits()).unwrap_err();
    assert!(
        matches!(
            e,
            GraphError::MissingTask {
                missing: 7,
                tasks: 2,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e
        .to_string()
        .contains("names task #7, but the graph has 2 tasks"));
    // And in the singular for one task.
    let (mut g, t) = graph(1);
    g.add_edge(t[0], TaskId::from_index(3));
    let e = g.validate(&limits()).unwrap_err().to_string();
    assert!(e.ends_with("the graph has 1 task"), "{e}");
}

#[test]
fn distance_above_the_maximum_is_rejected() {
    let (mut g, t) = graph(2);
    let too_far = autarky::abi::MAX_DISTANCE + 1;
    g.add_edge_with_distance(t[0], t[1], too_far);
    let e = g.validate(&limits()).unwrap_err();
    assert!(
        matches!(e, GraphError::BadDistance { distance, .. } if distance == too_far),
        "{e:?}"
    );
    assert!(e.to_string().contains("at most 65536"), "{e}");
    // Distance 2 (and anything up to the maximum) is fine.
    let (mut g, t) = graph(2);
    g.add_edge_with_distance(t[0], t[1], 2);
    g.validate(&limits()).unwrap();
}

#[test]
fn pe_out_of_range_is_rejected() {
    let (mut g, t) = graph(2);
    g.set_pe(t[1], 3);
    let e = g.validate(&limits()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "task #1 is placed on PE 3, but the run has 1 PE(s)"
    );
}

#[test]
fn argument_size_mismatch_is_rejected() {
    let mut g = Graph::new();
    let k = g.add_kind(kind()).unwrap();
    g.add_task(k, &7u64);
    let e = g.validate(&limits()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "task #0 of kind `k` has 8 argument bytes, but the kind declares 4"
    );
}

#[test]
fn more_tasks_than_the_queue_holds_is_rejected() {
    let (g, _) = graph(10);
    let e = g
        .validate(&Limits {
            num_pes: 1,
            max_tasks: 8,
            ..Limits::default()
        })
        .unwrap_err();
    assert!(
        matches!(
            e,
            GraphError::TooManyTasks {
                tasks: 10,
                capacity: 8
            }
        ),
        "{e:?}"
    );
}

#[test]
fn empty_graph_is_rejected() {
    assert_eq!(Graph::new().validate(&limits()), Err(GraphError::Empty));
}

#[test]
fn unknown_kind_id_is_rejected() {
    let (mut other, _) = graph(1);
    let foreign = other.add_kind(TaskKind::new("z", "")).unwrap();
    let (mut g, _) = graph(1);
    g.add_task_bytes(foreign, &[]);
    assert!(matches!(
        g.validate(&limits()),
        Err(GraphError::UnknownKind { kind: 1, .. })
    ));
}

#[test]
fn registering_a_kind_twice_is_an_error() {
    let mut g = Graph::new();
    g.add_kind(kind()).unwrap();
    let e = g.add_kind(kind()).unwrap_err();
    assert_eq!(e, GraphError::DuplicateKind { name: "k".into() });
    assert_eq!(e.to_string(), "task kind `k` is registered twice");
    assert_eq!(g.kinds().len(), 1, "the rejected kind was not registered");
}

#[test]
fn kind_name_that_is_not_a_c_identifier_is_an_error() {
    let e = Graph::new()
        .add_kind(TaskKind::new("no-dashes", ""))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "task kind name `no-dashes` is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)"
    );
    let e = Graph::new()
        .add_kind(TaskKind::new("9lives", ""))
        .unwrap_err();
    assert!(matches!(e, GraphError::BadKindName { .. }), "{e:?}");
    let e = Graph::new().add_kind(TaskKind::new("", "")).unwrap_err();
    assert!(matches!(e, GraphError::BadKindName { .. }), "{e:?}");
}

#[test]
fn kind_name_that_is_a_keyword_is_an_error() {
    for kw in ["int", "switch", "template", "nullptr"] {
        let e = Graph::new().add_kind(TaskKind::new(kw, "")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("task kind name `{kw}` is a C/C++ keyword")
        );
    }
}

#[test]
fn kind_name_reserved_by_autarky_or_the_compiler_is_an_error() {
    for name in ["autarky_step", "ctx", "kind", "__noop", "_Upper"] {
        let e = Graph::new().add_kind(TaskKind::new(name, "")).unwrap_err();
        assert!(
            matches!(&e, GraphError::BadKindName { reason, .. } if reason.contains("reserved")),
            "{name}: {e:?}"
        );
    }
}

#[test]
fn kind_name_that_cuda_gives_a_meaning_is_an_error() {
    for name in ["threadIdx", "blockDim", "warpSize", "main"] {
        let e = Graph::new().add_kind(TaskKind::new(name, "")).unwrap_err();
        assert!(
            matches!(&e, GraphError::BadKindName { reason, .. } if reason.contains("CUDA built-in")),
            "{name}: {e:?}"
        );
    }
    // Overloadable names are fine (a kind `sqrt(TaskCtx&)` overloads).
    assert!(Graph::new().add_kind(TaskKind::new("sqrt", "")).is_ok());
}

#[test]
fn lowering_builds_csr_tables_with_distances() {
    // 0 → 1, 0 → 2, 1 → 3, 2 → 3 (distance 0), 3 → 0 (distance 1), plus a
    // duplicate edge and a distance-1 self edge, both dropped.
    let (mut g, t) = graph(4);
    g.add_edge(t[0], t[1])
        .add_edge(t[0], t[2])
        .add_edge(t[1], t[3])
        .add_edge(t[2], t[3]);
    g.add_carried_edge(t[3], t[0])
        .add_edge(t[0], t[1])
        .add_carried_edge(t[2], t[2]);
    let l = g.lower(&limits()).unwrap();
    let succ = |i: usize| {
        l.succs(&l.tasks[i])
            .iter()
            .map(|e| (e.task, e.distance))
            .collect::<Vec<_>>()
    };
    let pred = |i: usize| {
        l.preds(&l.tasks[i])
            .iter()
            .map(|e| (e.task, e.distance))
            .collect::<Vec<_>>()
    };
    assert_eq!(succ(0), vec![(1, 0), (2, 0)]);
    assert_eq!(succ(3), vec![(0, 1)]);
    assert_eq!(succ(2), vec![(3, 0)]);
    assert_eq!(pred(3), vec![(1, 0), (2, 0)]);
    assert_eq!(pred(0), vec![(3, 1)]);
    // Successor entries carry the successor's predecessor range.
    for d in &l.tasks {
        for e in l.succs(d) {
            let s = &l.tasks[e.task as usize];
            assert_eq!((e.pred_start, e.pred_count), (s.pred_start, s.pred_count));
        }
    }
    // Task 0's only predecessor is loop-carried, so it is the only root.
    assert_eq!(l.roots, vec![0]);
    assert_eq!(l.initial_state()[0], autarky::abi::state_word(1, 0));
    assert_eq!(l.queue_capacity, 4);
    // Arguments sit at 16-aligned offsets with their bytes intact.
    for (i, d) in l.tasks.iter().enumerate() {
        assert_eq!(d.arg_offset % 16, 0);
        let bytes = &l.args[d.arg_offset as usize..(d.arg_offset + d.arg_len) as usize];
        assert_eq!(bytes, (i as u32).to_ne_bytes());
    }
}

#[test]
fn readiness_rule_follows_distances() {
    let (mut g, t) = graph(2);
    g.add_edge(t[0], t[1]).add_carried_edge(t[1], t[0]);
    let l = g.lower(&limits()).unwrap();
    let done = |d0: u32, d1: u32| move |t: u32| if t == 0 { d0 } else { d1 };
    assert!(
        l.instance_ready(0, 0, done(0, 0)),
        "instance 0 of a loop-carried successor needs nothing"
    );
    assert!(
        !l.instance_ready(0, 1, done(1, 0)),
        "instance 1 of task 0 needs instance 0 of task 1"
    );
    assert!(l.instance_ready(0, 1, done(1, 1)));
    assert!(!l.instance_ready(1, 0, done(0, 0)));
    assert!(l.instance_ready(1, 0, done(1, 0)));
    assert!(
        !l.instance_ready(1, 1, done(2, 0)),
        "the implicit self edge: instance 1 needs instance 0 done"
    );
}

#[test]
fn a_graph_compiles_only_the_scheduler_features_it_uses() {
    use autarky::runtime::source::Lean;
    let k = |g: &mut autarky::Graph, comm: bool| {
        let kind = TaskKind::new(if comm { "c" } else { "k" }, "");
        g.add_kind(if comm { kind.comm() } else { kind }).unwrap()
    };
    let limits2 = autarky::Limits {
        num_pes: 2,
        ..autarky::Limits::default()
    };
    // Dynamic compute tasks on one PE: everything else compiled out.
    let mut g = autarky::Graph::new();
    let kk = k(&mut g, false);
    let a = g.add_task_bytes(kk, &[]);
    let b = g.add_task_bytes(kk, &[]);
    g.add_edge(a, b);
    let lean = Lean::of(&g.lower_run(&limits2).unwrap());
    assert!(
        lean.no_pinned && lean.no_comm_work && lean.no_remote,
        "{lean:?}"
    );
    // A pinned task, a comm task and an edge between PEs turn each on.
    g.pin(a, 0);
    let kc = k(&mut g, true);
    let c = g.add_task_bytes(kc, &[]);
    g.set_pe(c, 1).add_edge(b, c);
    let lean = Lean::of(&g.lower_run(&limits2).unwrap());
    assert!(
        !lean.no_pinned && !lean.no_comm_work && !lean.no_remote,
        "{lean:?}"
    );
}

/// Remote successor entries (one per producer and consumer PE) and the
/// first unpinned compute task, against brute force on a random 3-PE
/// graph with pins: both are now computed without a scan of every edge
/// (or pinned list) per task, which made lowering quadratic.
#[test]
fn lowering_lists_each_producers_consumer_pes_and_the_first_unpinned_task() {
    let n = 60;
    let (mut g, t) = graph(n);
    let mut seed = 0x5eed_u64;
    let mut next = |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    let pe: Vec<u32> = (0..n).map(|_| next(3) as u32).collect();
    for i in 0..n {
        g.set_pe(t[i], pe[i]);
        if i % 4 != 3 {
            g.pin(t[i], next(2) as u32);
        }
    }
    let mut edges = Vec::new();
    for i in 1..n {
        for _ in 0..3 {
            let j = next(i as u64) as usize;
            g.add_edge(t[j], t[i]);
            edges.push((j, i));
        }
    }
    let run = g
        .lower_run(&Limits {
            num_pes: 3,
            ..limits()
        })
        .unwrap();
    for (q, l) in run.pes.iter().enumerate() {
        for (local, d) in l.tasks.iter().enumerate() {
            let gl = l.global[local] as usize;
            if run.local[gl].0 != q as u32 {
                continue; // a proxy
            }
            let got: Vec<u32> = l.remotes(d).iter().map(|r| r.pe).collect();
            let mut want: Vec<u32> = edges
                .iter()
                .filter(|&&(f, to)| f == gl && pe[to] != q as u32)
                .map(|&(_, to)| pe[to])
                .collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(got, want, "PE {q}, task {gl}");
        }
        let brute = (0..l.first_comm).find(|&x| !l.is_pinned(x));
        assert_eq!(l.first_unpinned_compute(), brute, "PE {q}");
    }
}

/// The round path's lists (`LoweredGraph::is_round_list`): two to eight
/// pinned tasks on one block whose predecessors from outside the list are
/// all of an earlier iteration (at most eight such edges, each task at
/// most eight predecessors), without dynamic successors; edges inside the
/// list of distance 0 only from an earlier task.
#[test]
fn a_round_list_waits_for_nothing_of_its_own_iteration_from_outside() {
    use autarky::graph::{ROUND_PREDS, ROUND_TASKS};
    assert_eq!((ROUND_TASKS, ROUND_PREDS), (8, 8));
    // `tasks` pinned to slot 0 (t[outside..]), `outside` dynamic tasks
    // (t[..outside]) each with a carried edge to the list's first task;
    // then `edit` adds what the case is about.
    let round = |outside: usize, tasks: usize, edit: &dyn Fn(&mut Graph, &[TaskId])| {
        let (mut g, t) = graph(outside + tasks + 1);
        for k in 0..tasks {
            g.pin(t[outside + k], 0);
        }
        for &p in &t[..outside] {
            g.add_carried_edge(p, t[outside]);
        }
        edit(&mut g, &t);
        let l = g.lower(&limits()).unwrap();
        let r = l.is_round_list(l.pinned_compute(0));
        assert_eq!(r, l.has_round_list());
        r
    };
    let none = |_: &mut Graph, _: &[TaskId]| {};
    assert!(round(4, 4, &none), "a 2 x 2 patch's shape");
    assert!(!round(4, 1, &none), "one task: the solo path");
    assert!(round(0, 8, &none), "eight tasks");
    assert!(!round(0, 9, &none), "nine: past the cache");
    assert!(round(8, 2, &none), "eight edges from outside");
    assert!(!round(9, 2, &none), "nine: past the round's registers");
    assert!(
        round(2, 3, &|g, t| {
            g.add_edge(t[2], t[3]);
            g.add_edge(t[2], t[4]);
            g.add_carried_edge(t[4], t[2]);
        }),
        "edges inside the list, distance 0 from earlier tasks"
    );
    assert!(
        !round(2, 3, &|g, t| {
            g.add_edge(t[0], t[3]);
        }),
        "a predecessor from outside in the same iteration"
    );
    assert!(
        !round(2, 3, &|g, t| {
            g.add_edge(t[3], t[5]);
        }),
        "a dynamic successor"
    );
    assert!(
        !round(2, 8, &|g, t| {
            for &p in &t[2..9] {
                g.add_carried_edge(p, t[9]);
            }
            g.add_carried_edge(t[0], t[9]);
            g.add_carried_edge(t[1], t[9]);
        }),
        "a task of nine predecessors (seven inside the list)"
    );
    let (g, _) = graph(3);
    assert!(
        !g.lower(&limits()).unwrap().has_round_list(),
        "nothing pinned"
    );
}

#[test]
fn a_solo_list_is_one_pinned_task_of_at_most_eight_predecessors() {
    use autarky::graph::{SOLO_PREDS, SOLO_WIDE_PREDS};
    let solo = |preds: usize, tasks_in_slot: usize| {
        let (mut g, t) = graph(preds + tasks_in_slot);
        for k in 0..tasks_in_slot {
            g.pin(t[preds + k], 0);
        }
        for &p in &t[..preds] {
            g.add_carried_edge(p, t[preds]);
        }
        g.lower(&limits()).unwrap().solo_preds()
    };
    assert_eq!((SOLO_PREDS, SOLO_WIDE_PREDS), (4, 8));
    assert_eq!(solo(0, 1), Some(0), "a pinned task with no predecessors");
    assert_eq!(solo(4, 1), Some(4), "a 2D stencil tile: four neighbours");
    assert_eq!(solo(6, 1), Some(6), "a 3D stencil tile: six");
    assert_eq!(solo(8, 1), Some(8), "a temporally blocked 2D tile: eight");
    assert_eq!(solo(9, 1), None, "nine predecessors: the cache's path");
    assert_eq!(solo(2, 2), None, "two tasks on one block: the cache's path");
    // The widest list decides the kernel's form; several solo lists.
    let (mut g, t) = graph(8);
    g.pin(t[2], 0);
    g.pin(t[7], 1);
    g.add_carried_edge(t[0], t[2]);
    for &p in &t[3..7] {
        g.add_carried_edge(p, t[7]);
    }
    let l = g.lower(&limits()).unwrap();
    assert!(l.has_solo_list());
    assert_eq!(l.solo_preds(), Some(4));
    let (g, _) = graph(3);
    let l = g.lower(&limits()).unwrap();
    assert!(!l.has_solo_list(), "nothing pinned");
    assert_eq!(l.solo_preds(), None);
}
