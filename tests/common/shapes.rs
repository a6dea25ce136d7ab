//! Random graph shapes, and the generator behind them, shared by the GPU
//! tests and the emulator's (which includes this file alone: it needs
//! nothing else of `common`).

use std::collections::HashSet;

use autarky::{Graph, TaskId};

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

/// A random graph of pinned and dynamic tasks: which compute slot each
/// task is pinned to, and its edges.
pub struct PinnedShape {
    /// Each task's compute slot (`None`: dynamic).
    pub pins: Vec<Option<u32>>,
    /// `(from, to, distance)`, no two with the same ends.
    pub edges: Vec<(usize, usize, u32)>,
}

impl PinnedShape {
    /// Pins `t` (the shape's tasks, in order) and adds the shape's edges to
    /// `g`.
    pub fn apply(&self, g: &mut Graph, t: &[TaskId]) {
        for (i, pin) in self.pins.iter().enumerate() {
            if let Some(s) = pin {
                g.pin(t[i], *s);
            }
        }
        for &(p, s, d) in &self.edges {
            g.add_edge_with_distance(t[p], t[s], d);
        }
    }
}

/// A `side` × `side` grid of tiles (row-major ids) pinned in 2 × 2 patches,
/// a compute slot each (row-major over the patches: round lists),
/// neighbours at distance 1 both ways; with `inside`, each patch's second
/// tile also waits for its first in the same iteration (the round's
/// checked loop).
pub fn grid_in_patches(side: usize, inside: bool) -> PinnedShape {
    let mut pins = Vec::new();
    let mut edges = Vec::new();
    for i in 0..side * side {
        let (r, c) = (i / side, i % side);
        pins.push(Some(((r / 2) * (side / 2) + c / 2) as u32));
        if r + 1 < side {
            edges.push((i, i + side, 1));
            edges.push((i + side, i, 1));
        }
        if c + 1 < side {
            edges.push((i, i + 1, 1));
            edges.push((i + 1, i, 1));
        }
        if inside && r % 2 == 0 && c % 2 == 0 {
            edges.push((i, i + 1, 0));
        }
    }
    PinnedShape { pins, edges }
}

/// `n` tasks, two in three pinned to one of `slots` compute slots (most
/// slots one task: the device's solo path; some several: the cached path),
/// each task awaiting 0–4 predecessors — or, when `wide`, 0–11 (most at
/// most four, some five to eight: the solo path's wide form, some more: the
/// cached path's generic poll) — along same-iteration edges from lower ids
/// (acyclic) and edges of distance 1 or 2 from any task. `below(m)` is a
/// random number in `0..m`.
pub fn random_pinned_shape(
    mut below: impl FnMut(u64) -> u64,
    n: usize,
    slots: u32,
    wide: bool,
) -> PinnedShape {
    assert!(slots >= 1 && n >= 2);
    let mut pins = vec![None; n];
    let mut used = 0u32;
    for pin in pins.iter_mut() {
        if below(3) == 0 {
            continue;
        }
        // A new slot four times in five while there are any: mostly lists
        // of one task.
        *pin = Some(if used < slots && (used == 0 || below(5) != 0) {
            used += 1;
            used - 1
        } else {
            below(used as u64) as u32
        });
    }
    let mut edges = Vec::new();
    let mut seen = HashSet::new();
    for s in 1..n {
        let k = match below(8) {
            _ if !wide => below(5),
            0..=3 => below(5),
            4..=6 => 5 + below(4),
            _ => 9 + below(3),
        };
        for _ in 0..k {
            let p = below(n as u64) as usize;
            if p == s || !seen.insert((p, s)) {
                continue;
            }
            let d = if p < s && below(2) == 0 {
                0
            } else {
                1 + below(2) as u32
            };
            edges.push((p, s, d));
        }
    }
    PinnedShape { pins, edges }
}

/// `patches` patches of two to four tasks (consecutive ids), patch `q`
/// pinned to compute slot `q % slots` — lists the device runs as rounds
/// where they qualify — then zero to three dynamic tasks feeding them.
/// Inside a patch: carried edges (distance 1 or 2) both ways, and — in
/// half the graphs — one patch in three has a same-iteration edge from an
/// earlier task to a later one (a round that reads its failure flag
/// between bodies: a kernel with such a list compiles that loop, so the
/// other half keeps the plain one).
/// Between patches: carried edges, at most six into a patch (a round polls
/// at most eight outside words) — except about one patch in eight, which
/// also waits for a task of an earlier patch in the same iteration (not a
/// round: the cached path beside the rounds). The dynamic tasks feed
/// patches along carried edges (outside words a round polls) and never
/// wait for a pinned task (a round list has no dynamic successor).
/// `below(m)` is a random number in `0..m`.
pub fn random_patched_shape(
    mut below: impl FnMut(u64) -> u64,
    patches: usize,
    slots: u32,
) -> PinnedShape {
    assert!(slots >= 1 && patches >= 1);
    let mut pins = Vec::new();
    let mut start = Vec::new();
    for q in 0..patches {
        start.push(pins.len());
        for _ in 0..2 + below(3) {
            pins.push(Some((q as u32) % slots));
        }
    }
    start.push(pins.len());
    let pinned = pins.len();
    let dynamic = below(4) as usize;
    pins.resize(pinned + dynamic, None);
    let waits_inside = below(2) == 0;
    let mut edges = Vec::new();
    let mut seen = HashSet::new();
    let mut add = |edges: &mut Vec<(usize, usize, u32)>, p: usize, s: usize, d: u32| {
        if p != s && seen.insert((p, s)) {
            edges.push((p, s, d));
        }
    };
    for q in 0..patches {
        let tasks = start[q]..start[q + 1];
        let k = tasks.len() as u64;
        for _ in 0..below(2 * k) {
            let (a, b) = (start[q] + below(k) as usize, start[q] + below(k) as usize);
            add(&mut edges, a, b, 1 + below(2) as u32);
        }
        if waits_inside && below(3) == 0 {
            let a = start[q] + below(k - 1) as usize;
            let b = a + 1 + below((start[q + 1] - a - 1) as u64) as usize;
            add(&mut edges, a, b, 0);
        }
        for _ in 0..below(7) {
            let from = below((pinned + dynamic) as u64) as usize;
            if tasks.contains(&from) {
                continue;
            }
            add(
                &mut edges,
                from,
                start[q] + below(k) as usize,
                1 + below(2) as u32,
            );
        }
        if q > 0 && below(8) == 0 {
            let from = below(start[q] as u64) as usize;
            add(&mut edges, from, start[q] + below(k) as usize, 0);
        }
    }
    PinnedShape { pins, edges }
}
