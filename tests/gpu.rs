//! GPU tests of the megakernel and its scheduler. Without a GPU each is
//! reported as ignored with the reason; with AUTARKY_REQUIRE_GPU=1 it fails
//! instead (tests/common/mod.rs has the harness).

mod common;

use autarky::abi_header::{expected_layout, layout_labels};
use autarky::runtime::RunOptions;
use autarky::{Buffer, Graph, Runtime, StateLayout, TaskId, TaskKind};
use common::*;

fn main() -> std::process::ExitCode {
    run_trials(vec![
        gpu_trial(
            "abi_probe_matches_rust_layout",
            abi_probe_matches_rust_layout,
        ),
        gpu_trial(
            "diamond_runs_every_instance_once_in_dependency_order",
            diamond_runs_every_instance_once_in_dependency_order,
        ),
        gpu_trial(
            "fan_out_1_to_1000_and_fan_in_1000_to_1",
            fan_out_1_to_1000_and_fan_in_1000_to_1,
        ),
        gpu_trial(
            "fan_in_1000_to_1_with_inputs_running_ahead",
            fan_in_1000_to_1_with_inputs_running_ahead,
        ),
        gpu_trial_with(
            "fan_in_1000_to_1_with_inputs_running_ahead_uncounted",
            Runtime::builder().gpu().counted_fan_in(u32::MAX),
            fan_in_1000_to_1_with_inputs_running_ahead,
        ),
        gpu_trial_with(
            "fan_in_1000_to_1_with_inputs_running_ahead_one_counter",
            Runtime::builder().gpu().arrival_slots_max_bytes(0),
            fan_in_1000_to_1_with_inputs_running_ahead,
        ),
        gpu_trial(
            "chain_of_100000_dependent_tasks",
            chain_of_100000_dependent_tasks,
        ),
        gpu_trial(
            "one_shot_chains_of_every_shape_run_in_order",
            one_shot_chains_of_every_shape_run_in_order,
        ),
        gpu_trial(
            "random_dag_10000_tasks_100_iterations_with_loop_carried_edges",
            random_dag_10000_tasks_100_iterations_with_loop_carried_edges,
        ),
        gpu_trial_with(
            "random_small_dags_with_few_blocks",
            Runtime::builder().gpu().compute_blocks(3),
            random_small_dags_with_few_blocks,
        ),
        gpu_trial(
            "dynamic_stencil_tiles_run_every_instance_once_after_their_neighbours",
            dynamic_stencil_tiles_run_every_instance_once_after_their_neighbours,
        ),
        gpu_trial_with(
            "dynamic_stencil_tiles_with_few_blocks",
            Runtime::builder().gpu().compute_blocks(3),
            dynamic_stencil_tiles_run_every_instance_once_after_their_neighbours,
        ),
        gpu_trial(
            "successor_reads_the_data_its_predecessor_wrote",
            successor_reads_the_data_its_predecessor_wrote,
        ),
        gpu_trial(
            "run_is_cpu_free_one_launch_then_only_waits",
            run_is_cpu_free_one_launch_then_only_waits,
        ),
        gpu_trial(
            "many_iterations_of_independent_tasks_complete",
            many_iterations_of_independent_tasks_complete,
        ),
        gpu_trial(
            "back_to_back_runs_reuse_the_loaded_kernel",
            back_to_back_runs_reuse_the_loaded_kernel,
        ),
        gpu_trial(
            "prepared_graphs_compile_in_parallel_and_their_runs_compile_nothing",
            prepared_graphs_compile_in_parallel_and_their_runs_compile_nothing,
        ),
        gpu_trial(
            "buffers_round_trip_on_the_device",
            buffers_round_trip_on_the_device,
        ),
        gpu_trial(
            "graphs_run_with_their_own_block_shape",
            graphs_run_with_their_own_block_shape,
        ),
        gpu_trial(
            "state_layouts_packed_and_spread_keep_every_order",
            state_layouts_packed_and_spread_keep_every_order,
        ),
        gpu_trial(
            "random_graphs_of_pinned_and_dynamic_tasks_keep_every_order",
            random_graphs_of_pinned_and_dynamic_tasks_keep_every_order,
        ),
        gpu_trial(
            "stencils_pinned_in_patches_compute_what_the_cpu_computes",
            stencils_pinned_in_patches_compute_what_the_cpu_computes,
        ),
        gpu_trial(
            "patches_with_same_iteration_edges_keep_every_order",
            patches_with_same_iteration_edges_keep_every_order,
        ),
        opt_in(
            gpu_trial("soak_1000_random_graphs", soak_1000_random_graphs),
            "opt-in soak of 1000 graphs on a GPU: cargo test --release --test gpu -- --ignored soak",
        ),
    ])
}

fn abi_probe_matches_rust_layout(rt: Runtime) {
    let got = rt.abi_probe().unwrap();
    let want = expected_layout();
    for ((g, w), label) in got.iter().zip(&want).zip(layout_labels()) {
        assert_eq!(g, w, "{label}: device says {g}, Rust says {w}");
    }
    assert_eq!(got.len(), want.len());
}

fn diamond_runs_every_instance_once_in_dependency_order(rt: Runtime) {
    run_logged(&rt, 4, 50, &[(0, 1), (0, 2), (1, 3), (2, 3)], &[(3, 0)]);
}

fn fan_out_1_to_1000_and_fan_in_1000_to_1(rt: Runtime) {
    let edges = (1..=1000)
        .flat_map(|i| [(0, i), (i, 1001)])
        .collect::<Vec<_>>();
    run_logged(&rt, 1002, 5, &edges, &[(1001, 0)]);
}

/// A join whose 1000 inputs do not wait for it (the dispatch bench's fan-in
/// shape, with counted joins — arrival slots, the default, and one counter
/// — and with scanned joins): inputs may run iterations
/// ahead of the sink, and every sink instance must still run after that
/// iteration's instance of every input and after its own previous one.
fn fan_in_1000_to_1_with_inputs_running_ahead(rt: Runtime) {
    let edges = (0..1000).map(|i| (i, 1000)).collect::<Vec<_>>();
    run_logged(&rt, 1001, 40, &edges, &[]);
}

/// Runs `n` logged tasks with these edges (`carried`: distance-1 edges) for
/// `iters` iterations, then checks the count and every instance's order.
fn run_logged(
    rt: &Runtime,
    n: usize,
    iters: u32,
    edges: &[(usize, usize)],
    carried: &[(usize, usize)],
) {
    let lg = Logged::new(rt, n, iters);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let t: Vec<TaskId> = (0..n).map(|_| g.add_task(k, &lg.args())).collect();
    for &(a, b) in edges {
        g.add_edge(t[a], t[b]);
    }
    for &(a, b) in carried {
        g.add_carried_edge(t[a], t[b]);
    }
    let r = rt.run(&g, iters).unwrap();
    assert_eq!(r.instances, n as u64 * iters as u64);
    lg.check(&g);
}

fn chain_of_100000_dependent_tasks(rt: Runtime) {
    let n = 100_000;
    let lg = Logged::new(&rt, n, 1);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let t: Vec<TaskId> = (0..n).map(|_| g.add_task(k, &lg.args())).collect();
    for w in t.windows(2) {
        g.add_edge(w[0], w[1]);
    }
    let r = rt.run(&g, 1).unwrap();
    assert_eq!(r.instances, n as u64);
    lg.check(&g);
    eprintln!(
        "chain of {n}: {:.3} µs per hand-off (device clock)",
        r.device_ns.unwrap() as f64 / 1e3 / n as f64
    );
}

/// Chains in a run of one iteration, the shapes the chain loop must tell
/// apart (it runs links with consecutive ids in batches of 32 and checks
/// every link against the tables): lengths around the batch size, two
/// chains interleaved (ids two apart), a chain built backwards (ids
/// descending), a chain with a fork and a join in the middle, and a chain
/// whose links have several successors. Every instance once, after its
/// predecessors; the same graph with 3 iterations (the main loop) too.
fn one_shot_chains_of_every_shape_run_in_order(rt: Runtime) {
    let build = |lg: &Logged, n: usize| {
        let mut g = Graph::new();
        let k = g.add_kind(logged_kind()).unwrap();
        let t: Vec<TaskId> = (0..n).map(|_| g.add_task(k, &lg.args())).collect();
        let mut next = 0;
        let mut take = |m: usize| {
            let r = next..next + m;
            next += m;
            r
        };
        // Consecutive chains across the batch boundaries.
        for len in [2, 31, 32, 33, 64, 65, 100] {
            let r = take(len);
            for i in r.start..r.end - 1 {
                g.add_edge(t[i], t[i + 1]);
            }
        }
        // Two chains interleaved: a_i = 2i, b_i = 2i + 1.
        let r = take(200);
        for i in r.start..r.end - 2 {
            g.add_edge(t[i], t[i + 2]);
        }
        // Backwards: ids descending along the chain.
        let r = take(50);
        for i in (r.start + 1..r.end).rev() {
            g.add_edge(t[i], t[i - 1]);
        }
        // A fork at 20 (to 21 and a side task) and a join at 40 (from 39 and
        // the side task).
        let r = take(61);
        let side = r.end - 1;
        for i in r.start..side - 1 {
            g.add_edge(t[i], t[i + 1]);
        }
        g.add_edge(t[r.start + 20], t[side]);
        g.add_edge(t[side], t[r.start + 40]);
        // A link whose successor also has another predecessor (the chain
        // goes on through a join every 10 tasks).
        let r = take(60);
        let feeder = take(1).start;
        for i in r.start..r.end - 1 {
            g.add_edge(t[i], t[i + 1]);
            if (i - r.start) % 10 == 9 {
                g.add_edge(t[feeder], t[i + 1]);
            }
        }
        assert_eq!(next, n);
        g
    };
    let n = 2 + 31 + 32 + 33 + 64 + 65 + 100 + 200 + 50 + 61 + 60 + 1;
    for iters in [1, 3] {
        let lg = Logged::new(&rt, n, iters);
        let g = build(&lg, n);
        let r = rt.run(&g, iters).unwrap();
        assert_eq!(r.instances, n as u64 * iters as u64);
        lg.check(&g);
    }
}

fn random_dag(rt: &autarky::Runtime, seed: u64, n: usize, iters: u32) {
    random_dag_with(rt, seed, n, iters, None);
}

fn random_dag_with(
    rt: &autarky::Runtime,
    seed: u64,
    n: usize,
    iters: u32,
    layout: Option<StateLayout>,
) {
    let lg = Logged::new(rt, n, iters);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let t: Vec<TaskId> = (0..n).map(|_| g.add_task(k, &lg.args())).collect();
    let mut rng = Rng(seed);
    for s in 1..n {
        // 0..3 distance-0 predecessors among earlier tasks (acyclic), biased
        // to nearby ones so the graph is deep, plus occasional back edges.
        for _ in 0..rng.below(4) {
            let back = 1 + rng.below((s as u64).min(64)) as usize;
            g.add_edge(t[s - back], t[s]);
        }
        if rng.below(10) == 0 {
            let p = rng.below(n as u64) as usize;
            g.add_carried_edge(t[p], t[s]);
        }
    }
    let opts = RunOptions {
        iterations: iters,
        state_layout: layout,
        ..Default::default()
    };
    let r = rt.run_with(&g, opts).unwrap();
    assert_eq!(r.instances, n as u64 * iters as u64);
    lg.check(&g);
}

/// Both layouts of the tasks' state words (packed eight bytes apart, the
/// default, and a 128-byte line each, asked for): a random DAG of dynamic tasks with loop-carried edges, and a
/// pinned 12 × 12 stencil of tiles waiting for their neighbours' previous
/// iteration, joined each iteration by a dynamic sink (a counted fan-in of
/// 144). Every instance once, after its predecessors.
fn state_layouts_packed_and_spread_keep_every_order(rt: Runtime) {
    for layout in [StateLayout::Packed, StateLayout::Spread] {
        random_dag_with(&rt, 0x1a70_u64, 3000, 30, Some(layout));
        let (side, iters) = (12usize, 40u32);
        let n = side * side + 1;
        let lg = Logged::new(&rt, n, iters);
        let mut g = Graph::new();
        let k = g.add_kind(logged_kind()).unwrap();
        let t: Vec<TaskId> = (0..n).map(|_| g.add_task(k, &lg.args())).collect();
        let (_, compute) = rt.blocks_per_pe_of(&g).unwrap();
        for i in 0..side * side {
            g.pin(t[i], i as u32 % compute);
            let (r, c) = (i / side, i % side);
            if r + 1 < side {
                g.add_carried_edge(t[i], t[i + side]);
                g.add_carried_edge(t[i + side], t[i]);
            }
            if c + 1 < side {
                g.add_carried_edge(t[i], t[i + 1]);
                g.add_carried_edge(t[i + 1], t[i]);
            }
            g.add_edge(t[i], t[n - 1]);
        }
        let opts = RunOptions {
            iterations: iters,
            state_layout: Some(layout),
            ..Default::default()
        };
        let r = rt.run_with(&g, opts).unwrap();
        assert_eq!(r.instances, n as u64 * iters as u64, "{layout:?}");
        lg.check(&g);
    }
}

/// A random graph of pinned and dynamic tasks (shapes::random_pinned_shape:
/// most pinned lists one task of 0-4 predecessors, or, for odd seeds, 0-11
/// — the solo path, its four- and eight-slot forms, and the cached path
/// past eight — some lists of several; edges of distance 0, 1 and 2), run
/// and checked: every
/// instance once, after its predecessors. Returns whether the kernel had
/// the solo path's wide form (`-DAUTARKY_SOLO_WIDE`).
fn random_pinned_dag(rt: &Runtime, seed: u64, n: usize, iters: u32) -> bool {
    let compute = logged_compute_blocks(rt);
    let mut rng = Rng(seed);
    let shape = shapes::random_pinned_shape(
        |m| rng.below(m),
        n,
        (compute / 2).clamp(1, 64),
        seed & 1 == 1,
    );
    let lowered = run_shape(rt, &shape, iters, &format!("seed {seed:#x}"));
    lowered
        .solo_preds()
        .is_some_and(|w| w > autarky::graph::SOLO_PREDS)
}

/// A random graph of patches of tiles (shapes::random_patched_shape: two
/// to four tasks a pinned list, edges inside and between patches, some of
/// the same iteration, a few dynamic tasks feeding them), run and checked.
/// Returns its round lists: how many, and how many of them wait inside
/// themselves (the round's checked loop, -DAUTARKY_ROUND_DEP).
fn random_patched_dag(rt: &Runtime, seed: u64, patches: usize, iters: u32) -> (usize, usize) {
    let compute = logged_compute_blocks(rt);
    let mut rng = Rng(seed);
    let shape = shapes::random_patched_shape(|m| rng.below(m), patches, (compute - 1).clamp(1, 64));
    let l = run_shape(rt, &shape, iters, &format!("patched seed {seed:#x}"));
    let rounds: Vec<&[u32]> = (0..l.pin_compute_slots)
        .map(|s| l.pinned_compute(s))
        .filter(|list| l.is_round_list(list))
        .collect();
    let inside = rounds
        .iter()
        .filter(|list| l.round_waits_inside(list))
        .count();
    (rounds.len(), inside)
}

/// Compute blocks a graph of the logged kind runs on.
fn logged_compute_blocks(rt: &Runtime) -> u32 {
    let mut g = Graph::new();
    g.add_kind(logged_kind()).unwrap();
    rt.blocks_per_pe_of(&g).unwrap().1
}

/// Runs `shape` (tasks of the logged kind) for `iters` iterations and
/// checks it: every instance once, after its predecessors. Returns the
/// lowered graph.
fn run_shape(
    rt: &Runtime,
    shape: &shapes::PinnedShape,
    iters: u32,
    what: &str,
) -> autarky::graph::LoweredGraph {
    let n = shape.pins.len();
    let lg = Logged::new(rt, n, iters);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let t: Vec<TaskId> = (0..n).map(|_| g.add_task(k, &lg.args())).collect();
    shape.apply(&mut g, &t);
    let r = rt.run(&g, iters).unwrap();
    assert_eq!(r.instances, n as u64 * iters as u64, "{what}");
    lg.check(&g);
    g.lower(&Default::default()).unwrap()
}

/// Forty random graphs of pinned and dynamic tasks (random_pinned_dag),
/// among them kernels with the solo path's wide form and without.
fn random_graphs_of_pinned_and_dynamic_tasks_keep_every_order(rt: Runtime) {
    let mut rng = Rng(0x50105010);
    let mut wide = 0;
    for _ in 0..40 {
        let n = 10 + rng.below(150) as usize;
        let iters = 1 + rng.below(20) as u32;
        wide += random_pinned_dag(&rt, rng.next(), n, iters) as u32;
    }
    eprintln!("40 pinned graphs, {wide} with eight-slot solo lists");
    assert!((1..40).contains(&wide), "both solo forms covered");
    // Patches of tiles: rounds, with and without tasks that wait inside
    // them, beside lists that are not rounds.
    let (mut rounds, mut inside, mut checked) = (0, 0, 0);
    for _ in 0..20 {
        let patches = 2 + rng.below(40) as usize;
        let iters = 1 + rng.below(20) as u32;
        let (r, i) = random_patched_dag(&rt, rng.next(), patches, iters);
        rounds += r;
        inside += i;
        checked += (i > 0) as u32;
    }
    eprintln!("20 patched graphs: {rounds} round lists, {inside} waiting inside ({checked} kernels with the checked loop)");
    assert!(
        rounds > 2 * inside && inside > 0,
        "both round loops covered"
    );
    assert!(
        (3..=17).contains(&checked),
        "kernels with and without the checked loop"
    );
}

/// A stencil of 64 cells a tile: cell j of tile t at iteration n is 3 × its
/// own previous value + n + cell j + 1 (mod 64) of each neighbour's
/// previous value, in u32 arithmetic; two buffers, iteration n writing
/// buffer n % 2 (so a tile's write waits for its neighbours' reads of the
/// iteration before: the same carried edges). Each thread reads cells
/// other threads of the neighbour's block wrote.
const STEN_SRC: &str = r#"
struct StenArgs { unsigned* buf; unsigned side; unsigned tile; };
__device__ void sten(autarky::TaskCtx& ctx) {
    const StenArgs& a = ctx.args<StenArgs>();
    const unsigned cells = 64, n = ctx.iteration, side = a.side, t = a.tile;
    const unsigned long long tiles = (unsigned long long)side * side;
    unsigned* cur = a.buf + (n & 1) * tiles * cells;
    const unsigned* prev = a.buf + ((n + 1) & 1) * tiles * cells;
    const unsigned r = t / side, c = t % side;
    for (unsigned j = threadIdx.x; j < cells; j += blockDim.x) {
        const unsigned k = (j + 1) % cells;
        unsigned v = prev[t * cells + j] * 3u + n;
        if (r > 0) v += prev[(t - side) * cells + k];
        if (r + 1 < side) v += prev[(t + side) * cells + k];
        if (c > 0) v += prev[(t - 1) * cells + k];
        if (c + 1 < side) v += prev[(t + 1) * cells + k];
        cur[t * cells + j] = v;
    }
}
"#;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct StenArgs {
    buf: u64,
    side: u32,
    tile: u32,
}

/// STEN_SRC on the CPU: the last iteration's buffer.
fn sten_reference(side: usize, iters: u32, init: &[u32]) -> Vec<u32> {
    const CELLS: usize = 64;
    let mut prev = init.to_vec();
    for n in 0..iters {
        let mut cur = vec![0u32; prev.len()];
        for t in 0..side * side {
            let (r, c) = (t / side, t % side);
            for j in 0..CELLS {
                let k = (j + 1) % CELLS;
                let mut v = prev[t * CELLS + j].wrapping_mul(3).wrapping_add(n);
                let mut add = |u: usize| v = v.wrapping_add(prev[u * CELLS + k]);
                if r > 0 {
                    add(t - side);
                }
                if r + 1 < side {
                    add(t + side);
                }
                if c > 0 {
                    add(t - 1);
                }
                if c + 1 < side {
                    add(t + 1);
                }
                cur[t * CELLS + j] = v;
            }
        }
        prev = cur;
    }
    prev
}

/// A side × side stencil (STEN_SRC) pinned in px × py patches a block
/// (patch k on compute slot k mod the compute blocks); carried edges
/// only.
fn patched_stencil(
    rt: &Runtime,
    side: usize,
    (px, py): (usize, usize),
    buf: &Buffer<u32>,
) -> Graph {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("sten", STEN_SRC).args::<StenArgs>())
        .unwrap();
    let (_, compute) = rt.blocks_per_pe_of(&g).unwrap();
    let t: Vec<TaskId> = (0..side * side)
        .map(|i| {
            g.add_task(
                k,
                &StenArgs {
                    buf: buf.addr(),
                    side: side as u32,
                    tile: i as u32,
                },
            )
        })
        .collect();
    // Pinned patch by patch (a list runs in the graph's topological order).
    for (pr, pc) in (0..side / py).flat_map(|a| (0..side / px).map(move |b| (a, b))) {
        for dr in 0..py {
            for dc in 0..px {
                let i = (pr * py + dr) * side + pc * px + dc;
                g.pin(t[i], ((pr * (side / px) + pc) as u32) % compute);
            }
        }
    }
    for i in 0..side * side {
        let (r, c) = (i / side, i % side);
        if r + 1 < side {
            g.add_carried_edge(t[i], t[i + side]);
            g.add_carried_edge(t[i + side], t[i]);
        }
        if c + 1 < side {
            g.add_carried_edge(t[i], t[i + 1]);
            g.add_carried_edge(t[i + 1], t[i]);
        }
    }
    g
}

/// A 16 × 16 stencil of 64-cell tiles pinned one a block (the solo path),
/// in 2 × 1, 2 × 2 and 4 × 2 patches (the round path: its lists wait for
/// nothing of their own iteration from outside) and in 4 × 4 patches (16
/// tasks: the cached path's limit passed, the generic path), 1, 2 and 37
/// iterations: the result is the CPU's, bit for bit, and the lowered
/// graph's lists are round lists exactly where expected.
fn stencils_pinned_in_patches_compute_what_the_cpu_computes(rt: Runtime) {
    let side = 16usize;
    let cells = side * side * 64;
    let init: Vec<u32> = {
        let mut rng = Rng(0x57e4c11);
        (0..cells).map(|_| rng.next() as u32).collect()
    };
    for patch in [(1, 1), (2, 1), (2, 2), (4, 2), (4, 4)] {
        for iters in [1u32, 2, 37] {
            let buf = rt.alloc::<u32>(2 * cells).unwrap();
            let mut both = vec![0xdead_beefu32; cells];
            both.extend_from_slice(&init);
            buf.copy_from(&both).unwrap();
            let g = patched_stencil(&rt, side, patch, &buf);
            let r = rt.run(&g, iters).unwrap();
            assert_eq!(r.instances, (side * side) as u64 * iters as u64);
            let got = buf.to_vec().unwrap();
            let last = (iters as usize - 1) % 2;
            let want = sten_reference(side, iters, &init);
            if let Some(j) = (0..cells).find(|&j| got[last * cells + j] != want[j]) {
                panic!(
                    "patch {patch:?}, {iters} iterations: tile {} cell {} is {:#x}, the CPU's {:#x}",
                    j / 64,
                    j % 64,
                    got[last * cells + j],
                    want[j]
                );
            }
            let lowered = g.lower(&Default::default()).unwrap();
            let round = patch.0 * patch.1;
            assert_eq!(
                lowered.has_round_list(),
                (2..=8).contains(&round),
                "patch {patch:?}: round lists"
            );
        }
    }
}

/// Patches of four tiles with edges inside them of distance 0 (each
/// patch's first tile before its second), which the round path runs in
/// list order, and a variant whose patches also wait for a tile of another
/// patch in the same iteration (not a round list: the cached path): every
/// instance once, after its predecessors.
fn patches_with_same_iteration_edges_keep_every_order(rt: Runtime) {
    for outside in [false, true] {
        let (side, iters) = (8usize, 30u32);
        let n = side * side;
        let lg = Logged::new(&rt, n, iters);
        let mut g = Graph::new();
        let k = g.add_kind(logged_kind()).unwrap();
        let t: Vec<TaskId> = (0..n).map(|_| g.add_task(k, &lg.args())).collect();
        let (_, compute) = rt.blocks_per_pe_of(&g).unwrap();
        for (pr, pc) in (0..side / 2).flat_map(|a| (0..side / 2).map(move |b| (a, b))) {
            let patch =
                [(0, 0), (0, 1), (1, 0), (1, 1)].map(|(dr, dc)| (pr * 2 + dr) * side + pc * 2 + dc);
            for &i in &patch {
                g.pin(t[i], ((pr * (side / 2) + pc) as u32) % compute);
            }
            g.add_edge(t[patch[0]], t[patch[1]]);
            g.add_edge(t[patch[0]], t[patch[3]]);
            if outside && pc > 0 {
                // The patch's first tile waits for the previous patch's
                // last, same iteration.
                g.add_edge(t[patch[0] - 1], t[patch[0]]);
            }
        }
        for i in 0..n {
            let (r, c) = (i / side, i % side);
            if r + 1 < side {
                g.add_carried_edge(t[i], t[i + side]);
                g.add_carried_edge(t[i + side], t[i]);
            }
            if c + 1 < side {
                g.add_carried_edge(t[i], t[i + 1]);
                g.add_carried_edge(t[i + 1], t[i]);
            }
        }
        // Sixteen patches on sixteen blocks: all round lists, or only the
        // four that start a row of patches.
        let lowered = g.lower(&Default::default()).unwrap();
        let rounds = (0..lowered.pin_compute_slots)
            .filter(|&s| lowered.is_round_list(lowered.pinned_compute(s)))
            .count();
        assert!(compute >= 16, "{compute} compute blocks");
        assert_eq!(rounds, if outside { 4 } else { 16 }, "outside {outside}");
        let r = rt.run(&g, iters).unwrap();
        assert_eq!(r.instances, n as u64 * iters as u64, "outside {outside}");
        lg.check(&g);
    }
}

fn random_dag_10000_tasks_100_iterations_with_loop_carried_edges(rt: Runtime) {
    random_dag(&rt, 0x5eed_1234, 10_000, 100);
}

/// Dynamic tiles of 2D and 3D grids, each waiting for its neighbours'
/// previous iteration (2–6 successor edges of 2–7 predecessors each: the
/// block-wide completion, each successor checked by a thread of its own),
/// and a 2D grid whose tiles also wait for their neighbours' same
/// iteration along one axis (distance 0): every instance once, after its
/// predecessors and its own previous instance.
fn dynamic_stencil_tiles_run_every_instance_once_after_their_neighbours(rt: Runtime) {
    for (dims, same_iteration) in [([1, 16, 16], false), ([4, 5, 6], false), ([1, 12, 9], true)] {
        let n = dims.iter().product::<usize>();
        let iters = 40;
        let lg = Logged::new(&rt, n, iters);
        let mut g = Graph::new();
        let k = g.add_kind(logged_kind()).unwrap();
        let t: Vec<TaskId> = (0..n).map(|_| g.add_task(k, &lg.args())).collect();
        let at = |z: usize, y: usize, x: usize| t[(z * dims[1] + y) * dims[2] + x];
        for z in 0..dims[0] {
            for y in 0..dims[1] {
                for x in 0..dims[2] {
                    let mut pair = |a: TaskId, b: TaskId, along_x: bool| {
                        if same_iteration && along_x {
                            g.add_edge(a, b); // acyclic: left to right
                        } else {
                            g.add_carried_edge(a, b);
                            g.add_carried_edge(b, a);
                        }
                    };
                    if x + 1 < dims[2] {
                        pair(at(z, y, x), at(z, y, x + 1), true);
                    }
                    if y + 1 < dims[1] {
                        pair(at(z, y, x), at(z, y + 1, x), false);
                    }
                    if z + 1 < dims[0] {
                        pair(at(z, y, x), at(z + 1, y, x), false);
                    }
                }
            }
        }
        let r = rt.run(&g, iters).unwrap();
        assert_eq!(r.instances, n as u64 * iters as u64, "{dims:?}");
        lg.check(&g);
    }
}

/// Few blocks make the queue and keep-one paths interleave differently.
fn random_small_dags_with_few_blocks(rt: Runtime) {
    for seed in 1..=20 {
        random_dag(&rt, seed, 50 + seed as usize * 7, 30);
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PipeArgs {
    buf: u64,
    n: u32,
    stage: u32,
}

/// Stage 0 writes f(iteration) into a buffer; stage 1 reads and checks it,
/// then clears it. Loop-carried edge 1 → 0 keeps stage 0 from overwriting
/// data stage 1 has not read (the WAR hazard).
const PIPE_SRC: &str = r#"
struct PipeArgs { unsigned* buf; unsigned n; unsigned stage; };
__device__ void pipe(autarky::TaskCtx& ctx) {
    const PipeArgs& a = ctx.args<PipeArgs>();
    __shared__ unsigned bad;
    if (threadIdx.x == 0) bad = 0;
    __syncthreads();
    for (unsigned i = threadIdx.x; i < a.n; i += blockDim.x) {
        const unsigned want = ctx.iteration * 7919u + i;
        if (a.stage == 0) {
            a.buf[i] = want;
        } else {
            if (a.buf[i] != want) atomicAdd(&bad, 1u);
            a.buf[i] = 0xdeadbeefu;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && bad) ctx.fail(bad);
}
"#;

fn successor_reads_the_data_its_predecessor_wrote(rt: Runtime) {
    let n = 1 << 16;
    let pairs = 64;
    let bufs: Vec<_> = (0..pairs).map(|_| poisoned(&rt, n / 2)).collect();
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new("pipe", PIPE_SRC).args::<PipeArgs>())
        .unwrap();
    for b in &bufs {
        let w = g.add_task(
            k,
            &PipeArgs {
                buf: b.addr(),
                n: n as u32,
                stage: 0,
            },
        );
        let r = g.add_task(
            k,
            &PipeArgs {
                buf: b.addr(),
                n: n as u32,
                stage: 1,
            },
        );
        g.add_edge(w, r).add_carried_edge(r, w);
    }
    let r = rt.run(&g, 200).unwrap();
    assert_eq!(r.instances, 2 * pairs as u64 * 200);
}

fn run_is_cpu_free_one_launch_then_only_waits(rt: Runtime) {
    let lg = Logged::new(&rt, 100, 20);
    let mut g = Graph::new();
    let k = g.add_kind(logged_kind()).unwrap();
    let t: Vec<TaskId> = (0..100).map(|_| g.add_task(k, &lg.args())).collect();
    for w in t.windows(2) {
        g.add_edge(w[0], w[1]);
    }
    let r = rt.run(&g, 20).unwrap();
    assert_eq!(
        r.driver_calls.first(),
        Some(&"cuLaunchCooperativeKernel"),
        "{:?}",
        r.driver_calls
    );
    assert_eq!(
        r.driver_calls
            .iter()
            .filter(|c| **c == "cuLaunchCooperativeKernel")
            .count(),
        1
    );
    assert!(
        r.driver_calls[1..].iter().all(|c| *c == "cuStreamQuery"),
        "driver calls during the run: {:?}",
        r.driver_calls
    );
    lg.check(&g);
}

fn many_iterations_of_independent_tasks_complete(rt: Runtime) {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new(
            "empty",
            "__device__ void empty(autarky::TaskCtx&) {}",
        ))
        .unwrap();
    for _ in 0..5000 {
        g.add_task_bytes(k, &[]);
    }
    let r = rt.run(&g, 200).unwrap();
    assert_eq!(r.instances, 5000 * 200);
    assert_eq!(r.per_block.iter().sum::<u64>(), 5000 * 200);
    eprintln!(
        "independent: {:.3} G instances/s over {} blocks",
        1e6 / r.device_ns.unwrap() as f64,
        r.per_block.len()
    );
}

fn back_to_back_runs_reuse_the_loaded_kernel(rt: Runtime) {
    let mut g = Graph::new();
    let k = g
        .add_kind(TaskKind::new(
            "empty",
            "__device__ void empty(autarky::TaskCtx&) {}",
        ))
        .unwrap();
    let a = g.add_task_bytes(k, &[]);
    let b = g.add_task_bytes(k, &[]);
    g.add_edge(a, b);
    let (free0, _) = rt.device_memory().unwrap();
    for _ in 0..50 {
        assert_eq!(
            rt.run_with(&g, RunOptions::iterations(10))
                .unwrap()
                .instances,
            20
        );
    }
    let (free1, _) = rt.device_memory().unwrap();
    assert!(
        free0.abs_diff(free1) < 16 << 20,
        "device memory in use changed by {} bytes",
        free0.abs_diff(free1)
    );
}

/// The threads of this process's compiles the disk cache could not
/// answer, one entry a compile (the notice
/// [`autarky::runtime::nvrtc::set_compile_notice`] installs is called on
/// the compiling thread, before each), so a trial counts its own compiles
/// while others run beside it.
static COMPILES: std::sync::Mutex<Vec<std::thread::ThreadId>> = std::sync::Mutex::new(Vec::new());

fn count_compile(_name: &str, _file: Option<&std::path::Path>) {
    COMPILES.lock().unwrap().push(std::thread::current().id());
}

/// Compiles so far on any of `threads`.
fn compiles_on(threads: &[std::thread::ThreadId]) -> usize {
    COMPILES
        .lock()
        .unwrap()
        .iter()
        .filter(|t| threads.contains(t))
        .count()
}

/// `Runtime::prepare` compiles the kernel its run launches: three graphs
/// whose kinds no cache has seen (a nonce in their source), prepared from
/// threads of their own at once, compile three kernels; their runs — one
/// of them traced, prepared traced — compile none and run every instance.
/// A run with other options than its preparation (traced, prepared
/// untraced) compiles its own kernel.
fn prepared_graphs_compile_in_parallel_and_their_runs_compile_nothing(rt: Runtime) {
    autarky::runtime::nvrtc::set_compile_notice(count_compile);
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let graphs: Vec<Graph> = (0..3)
        .map(|i| {
            let mut g = Graph::new();
            let k = g
                .add_kind(TaskKind::new(
                    "empty",
                    format!("// {nonce} {i}\n__device__ void empty(autarky::TaskCtx&) {{}}"),
                ))
                .unwrap();
            let a = g.add_task_bytes(k, &[]);
            let b = g.add_task_bytes(k, &[]);
            g.add_edge(a, b);
            g
        })
        .collect();
    let traced = || RunOptions {
        trace: Some(Default::default()),
        ..RunOptions::iterations(10)
    };
    let opts = [
        RunOptions::iterations(10),
        RunOptions::iterations(7),
        traced(),
    ];
    let t = std::time::Instant::now();
    let jobs: Vec<(&Graph, &RunOptions)> = graphs.iter().zip(&opts).collect();
    let preparers = std::sync::Mutex::new(Vec::new());
    in_parallel(&jobs, |(g, o)| {
        preparers.lock().unwrap().push(std::thread::current().id());
        rt.prepare(g, o).unwrap()
    });
    eprintln!("3 kernels prepared in parallel in {:?}", t.elapsed());
    let preparers = preparers.into_inner().unwrap();
    assert_eq!(compiles_on(&preparers), 3, "one compile a new kernel");
    let me = [std::thread::current().id()];
    let before = compiles_on(&me);
    for (g, o) in &jobs {
        let r = rt.run_with(g, (*o).clone()).unwrap();
        assert_eq!(r.instances, 2 * o.iterations as u64);
    }
    assert_eq!(compiles_on(&me), before, "the runs compiled nothing");
    rt.run_with(&graphs[0], traced()).unwrap();
    assert_eq!(compiles_on(&me), before + 1, "traced: a kernel of its own");
}

/// Soak: 1000 short random graphs back to back in one process, each checked
/// (every third one of pinned and dynamic tasks: random_pinned_dag, or —
/// every sixth — patches of tiles run as rounds: random_patched_dag);
/// device memory in use must not grow and nothing may hang.
/// `cargo test --release --test gpu -- --ignored soak` on a GPU machine.
fn soak_1000_random_graphs(rt: Runtime) {
    let mut rng = Rng(0xdecafbad);
    let mut baseline = None;
    let started = std::time::Instant::now();
    for run in 0..1000 {
        let n = 5 + rng.below(200) as usize;
        let iters = 1 + rng.below(20) as u32;
        if run % 6 == 5 {
            random_patched_dag(&rt, rng.next(), 2 + n / 5, iters);
        } else if run % 3 == 2 {
            random_pinned_dag(&rt, rng.next(), n.max(10), iters);
        } else {
            random_dag(&rt, rng.next(), n, iters);
        }
        let (free, _) = rt.device_memory().unwrap();
        match baseline {
            None => baseline = Some(free),
            Some(b) => assert!(
                b.saturating_sub(free) < 64 << 20,
                "run {run}: device memory in use grew by {} bytes",
                b - free
            ),
        }
    }
    eprintln!("soak: 1000 graphs in {:?}", started.elapsed());
}

fn buffers_round_trip_on_the_device(rt: Runtime) {
    let b = rt.alloc::<u32>(1000).unwrap();
    assert_eq!(b.backend_name(), "gpu");
    assert_eq!(b.to_vec().unwrap(), vec![0; 1000], "allocated zeroed");
    let data: Vec<u32> = (0..1000).map(|i| i * 3 + 1).collect();
    b.copy_from(&data).unwrap();
    assert_eq!(b.to_vec().unwrap(), data);
    b.fill_zero().unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![0; 1000]);
    assert!(matches!(
        b.copy_from(&data[..10]),
        Err(autarky::Error::BufferSize {
            len: 1000,
            got: 10,
            ..
        })
    ));
}

/// Every thread of the block adds one to its task's word, and thread 0
/// records blockDim.x: a launch at another shape than the graph's shows in
/// both words.
const SHAPE_SRC: &str = r#"
struct ShapeArgs { unsigned* out; unsigned task; unsigned pad; };
__device__ void shape(autarky::TaskCtx& ctx) {
    const ShapeArgs& a = ctx.args<ShapeArgs>();
    atomicAdd(&a.out[2 * a.task], 1u);
    if (threadIdx.x == 0) a.out[2 * a.task + 1] = blockDim.x;
}
"#;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ShapeArgs {
    out: u64,
    task: u32,
    pad: u32,
}

/// A graph that sets its block shape runs with it on a runtime of another
/// (and one that does not, with the runtime's): every body sees the
/// graph's blockDim, with every thread present, instance after instance,
/// dynamic and pinned tasks alike; the block counts follow the shape.
fn graphs_run_with_their_own_block_shape(rt: Runtime) {
    let runtime_threads = rt.threads_per_block();
    let (tasks, iters) = (48u32, 20u32);
    for threads in [None, Some(64), Some(256), Some(1024)] {
        let out = rt.alloc::<u32>(2 * tasks as usize).unwrap();
        let mut g = Graph::new();
        let k = g
            .add_kind(TaskKind::new("shape", SHAPE_SRC).args::<ShapeArgs>())
            .unwrap();
        if let Some(t) = threads {
            g.set_threads_per_block(t).unwrap();
        }
        let (_, compute) = rt.blocks_per_pe_of(&g).unwrap();
        let ids: Vec<TaskId> = (0..tasks)
            .map(|i| {
                g.add_task(
                    k,
                    &ShapeArgs {
                        out: out.addr(),
                        task: i,
                        pad: 0,
                    },
                )
            })
            .collect();
        // Half a chain of dynamic tasks, half pinned round-robin.
        for w in ids[..tasks as usize / 2].windows(2) {
            g.add_edge(w[0], w[1]);
        }
        for (i, &t) in ids[tasks as usize / 2..].iter().enumerate() {
            g.pin(t, i as u32 % compute);
        }
        rt.run(&g, iters).unwrap();
        let want = threads.unwrap_or(runtime_threads);
        let got = out.to_vec().unwrap();
        for t in 0..tasks as usize {
            assert_eq!(
                got[2 * t + 1],
                want,
                "task {t} ran with blockDim {} for {threads:?}",
                got[2 * t + 1]
            );
            assert_eq!(
                got[2 * t],
                want * iters,
                "task {t}: thread-instances for {threads:?}"
            );
        }
        if threads == Some(1024) {
            let (_, default_compute) = rt.blocks_per_pe(g.kinds()).unwrap();
            assert!(
                compute < default_compute,
                "1024-thread blocks: {compute} compute blocks, the runtime's shape {default_compute}"
            );
        }
    }
}
