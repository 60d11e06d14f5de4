//! Functions that change no general register (`__fentry__` and `__x86_return_thunk`
//! in a static vmlinux, before ftrace and the alternatives patch the code): a call to
//! one leaves the caller's argument registers as they were, so it neither ends the
//! tracking of an argument nor counts as the callee of an address.

use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Instruction, InstructionInfoFactory,
    InstructionInfoOptions, OpKind, Register,
};
use rayon::prelude::*;

use super::targets::Targets;

/// The symbols, sorted, of the functions whose code writes no general register but
/// `rsp` and whose calls and jumps out go only to such functions (the largest set with
/// that property: a fixed point from the functions clean on their own).
pub(super) fn preserving(targets: &Targets, functions: &[(u32, u64, &[u8])]) -> Vec<u32> {
    let own: Vec<(u32, Vec<u32>)> = functions
        .par_iter()
        .map_init(
            InstructionInfoFactory::new,
            |factory, &(symbol, start, bytes)| {
                clean(factory, targets, start, bytes).map(|out| (symbol, out))
            },
        )
        .flatten()
        .collect();
    let mut kept: Vec<(u32, Vec<u32>)> = own;
    kept.sort_by_key(|(s, _)| *s);
    loop {
        let before = kept.len();
        let symbols: Vec<u32> = kept.iter().map(|(s, _)| *s).collect();
        kept.retain(|(_, out)| out.iter().all(|c| symbols.binary_search(c).is_ok()));
        if kept.len() == before {
            return symbols;
        }
    }
}

/// The functions a function's code branches out to, when that code writes no general
/// register but `rsp` and branches nowhere unknown; `None` otherwise.
fn clean(
    factory: &mut InstructionInfoFactory,
    targets: &Targets,
    start: u64,
    bytes: &[u8],
) -> Option<Vec<u32>> {
    let end = start.saturating_add(bytes.len() as u64);
    let mut decoder = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
    let mut insn = Instruction::default();
    let mut out = Vec::new();
    while decoder.can_decode() {
        decoder.decode_out(&mut insn);
        if let Some(callee) = leaves(&insn, targets, start, end)? {
            out.push(callee);
        }
        let info = factory.info_options(&insn, InstructionInfoOptions::NO_MEMORY_USAGE);
        let writes = info.used_registers().iter().any(|u| {
            let full = u.register().full_register();
            full.is_gpr64() && full != Register::RSP && super::regs::writes(u.access())
        });
        if writes {
            return None;
        }
    }
    Some(out)
}

/// For a branch: `Some(Some(f))` when it leaves for the start of function `f`,
/// `Some(None)` when it stays inside `[start, end)` or is not a branch, `None` when it
/// goes anywhere else (indirect, or into the middle of other code).
fn leaves(insn: &Instruction, targets: &Targets, start: u64, end: u64) -> Option<Option<u32>> {
    match insn.flow_control() {
        FlowControl::Next | FlowControl::Return | FlowControl::Interrupt => Some(None),
        FlowControl::Call | FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch
            if insn.op0_kind() == OpKind::NearBranch64 =>
        {
            let target = insn.near_branch_target();
            if (start..end).contains(&target) {
                return Some(None);
            }
            targets.function_at(target).map(Some)
        }
        _ => None,
    }
}
