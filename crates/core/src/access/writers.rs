//! Which functions write through which arguments, over the whole call graph: a
//! function writes through an argument when its own code does, or when it hands the
//! argument unchanged to a callee that does (a fixed point, reached by a worklist).

use super::Writer;
use super::regs::ArgFacts;

/// The writers among `facts` (one entry per function, by symbol index), sorted by
/// function; functions that write through no argument are left out.
pub(super) fn writers(facts: &[(u32, ArgFacts)]) -> Vec<Writer> {
    let mut order: Vec<usize> = (0..facts.len()).collect();
    order.sort_by_key(|&i| facts[i].0);
    let slot_of = |symbol: u32| {
        order
            .binary_search_by_key(&symbol, |&i| facts[i].0)
            .ok()
            .map(|k| order[k])
    };
    // callers[callee slot] = (caller slot, caller's argument, callee's argument).
    let mut callers: Vec<Vec<(usize, u8, u8)>> = vec![Vec::new(); facts.len()];
    for (caller, (_, f)) in facts.iter().enumerate() {
        for p in &f.passes {
            if let Some(callee) = slot_of(p.callee) {
                callers[callee].push((caller, p.own_arg, p.callee_arg));
            }
        }
    }
    let mut masks: Vec<u8> = facts.iter().map(|(_, f)| f.writes).collect();
    let mut work: Vec<(usize, u8)> = masks
        .iter()
        .enumerate()
        .flat_map(|(slot, &m)| {
            (0..8u8)
                .filter(move |a| m & (1 << a) != 0)
                .map(move |a| (slot, a))
        })
        .collect();
    while let Some((callee, arg)) = work.pop() {
        for &(caller, own, callee_arg) in &callers[callee] {
            if callee_arg == arg && masks[caller] & (1 << own) == 0 {
                masks[caller] |= 1 << own;
                work.push((caller, own));
            }
        }
    }
    order
        .into_iter()
        .filter(|&i| masks[i] != 0)
        .map(|i| Writer {
            function: facts[i].0,
            args: masks[i],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::regs::Pass;

    fn facts(writes: u8, passes: &[(u32, u8, u8)]) -> ArgFacts {
        ArgFacts {
            writes,
            passes: passes
                .iter()
                .map(|&(callee, callee_arg, own_arg)| Pass {
                    callee,
                    callee_arg,
                    own_arg,
                })
                .collect(),
        }
    }

    #[test]
    fn a_writer_reaches_callers_through_the_argument_they_pass_only() {
        // 1 writes through arg 0; 2 passes its arg 1 as 1's arg 0; 3 passes its arg 0
        // as 2's arg 0 (not the written one); 4 passes its arg 2 as 2's arg 1.
        let all = vec![
            (4, facts(0, &[(2, 1, 2)])),
            (1, facts(0b1, &[])),
            (3, facts(0, &[(2, 0, 0)])),
            (2, facts(0, &[(1, 0, 1)])),
        ];
        let got: Vec<(u32, u8)> = writers(&all).iter().map(|w| (w.function, w.args)).collect();
        assert_eq!(got, [(1, 0b1), (2, 0b10), (4, 0b100)]);
    }

    #[test]
    fn cycles_end() {
        let all = vec![(1, facts(0, &[(2, 0, 0)])), (2, facts(0b1, &[(1, 0, 0)]))];
        let got: Vec<(u32, u8)> = writers(&all).iter().map(|w| (w.function, w.args)).collect();
        assert_eq!(got, [(1, 1), (2, 1)]);
    }
}
