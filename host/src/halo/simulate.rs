//! Executing a plan on CPU arrays: the reference semantics of a pulse.

use std::collections::BinaryHeap;

use super::{HaloError, Plan};

impl Plan {
    /// Runs every pulse on CPU arrays, one padded array per PE (sized by
    /// [`Plan::layout`]): each pulse packs its `send` box of the sender in
    /// row-major order and unpacks it into the `recv` box of the receiver.
    ///
    /// Pulses run in a dependency order derived from [`Forwarded`] parts
    /// only, and among the pulses that are ready the one with the *highest*
    /// id goes first. That order is as far from the planned Z → Y → X order as
    /// the dependencies allow, so a dependency the plan forgot shows up as a
    /// wrong ghost cell instead of being hidden by the planned order.
    ///
    /// Errors: [`HaloError::WrongArrayCount`], [`HaloError::WrongArrayLength`].
    ///
    /// [`Forwarded`]: super::Forwarded
    pub fn simulate<T: Copy>(&self, arrays: &mut [Vec<T>]) -> Result<(), HaloError> {
        let n = self.decomp.num_pes();
        if arrays.len() != n {
            return Err(HaloError::WrongArrayCount {
                expected: n,
                got: arrays.len(),
            });
        }
        for (pe, a) in arrays.iter().enumerate() {
            let expected = self.layout(pe).len();
            if a.len() != expected {
                return Err(HaloError::WrongArrayLength {
                    pe,
                    expected,
                    got: a.len(),
                });
            }
        }
        let mut buf = Vec::new();
        for id in self.dependency_order() {
            let p = &self.pulses[id];
            let (ls, lr) = (self.layout(p.from_pe), self.layout(p.to_pe));
            buf.clear();
            buf.extend(p.send.cells().map(|c| arrays[p.from_pe][ls.index_of(c)]));
            for (c, v) in p.recv.cells().zip(&buf) {
                arrays[p.to_pe][lr.index_of(c)] = *v;
            }
        }
        Ok(())
    }

    /// Pulse ids in an order where each pulse follows every pulse its
    /// forwarded parts name, preferring the highest ready id (Kahn's
    /// algorithm with a max-heap).
    pub fn dependency_order(&self) -> Vec<usize> {
        let m = self.pulses.len();
        let mut waiting = vec![0usize; m];
        let mut dependents = vec![Vec::new(); m];
        for p in &self.pulses {
            for d in p.depends_on() {
                waiting[p.id] += 1;
                dependents[d].push(p.id);
            }
        }
        let mut ready: BinaryHeap<usize> = (0..m).filter(|&i| waiting[i] == 0).collect();
        let mut order = Vec::with_capacity(m);
        while let Some(id) = ready.pop() {
            order.push(id);
            for &d in &dependents[id] {
                waiting[d] -= 1;
                if waiting[d] == 0 {
                    ready.push(d);
                }
            }
        }
        // Dependencies point only to lower ids, so there is no cycle.
        debug_assert_eq!(order.len(), m, "forwarding dependencies form a cycle");
        order
    }
}
