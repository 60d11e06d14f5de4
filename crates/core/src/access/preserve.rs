//! Functions that change no general register and write no memory (`__fentry__` and
//! `__x86_return_thunk` in a static vmlinux, before ftrace and the alternatives patch
//! the code): a call to one leaves the caller's argument registers as they were, so it
//! neither ends the tracking of an argument nor counts as the callee of an address.
//! A function that writes memory is not one of them, even when it changes no
//! register: a leaf that writes through its argument (`movl $0,0x14(%rdi); ret`,
//! `xdp_rxq_info_unused`) must stay a callee, and a retpoline
//! (`__x86_indirect_thunk_rax`: `call 1f; ...; 1: mov %rax,(%rsp); ret`) replaces its
//! return address, so a call to it is an indirect call.

use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Instruction, InstructionInfoFactory,
    InstructionInfoOptions, OpKind, Register,
};
use rayon::prelude::*;

use super::targets::Targets;

/// The symbols, sorted, of the functions whose code writes no general register but
/// `rsp`, no memory through an operand, and whose calls and jumps out go only to such
/// functions (the largest set with that property: a fixed point from the functions
/// clean on their own).
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
/// register but `rsp`, writes no memory operand (the stack slots `call` and `push`
/// write are no operand) and branches nowhere unknown; `None` otherwise.
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
        let stores = (0..insn.op_count()).any(|op| {
            matches!(
                insn.op_kind(op),
                OpKind::Memory | OpKind::MemoryESDI | OpKind::MemoryESEDI | OpKind::MemoryESRDI
            ) && super::regs::writes(info.op_access(op))
        });
        if writes || stores {
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::access::{self, AccessKind};
    use crate::model::{CodeSection, Image, Symbol, SymbolKind};

    const TEXT: u64 = 0xffff_ffff_8100_0000;

    /// 6.1's shapes, assembled with GNU as at `TEXT` (objdump, offsets from `TEXT`):
    /// - 0x00 `fentry`: `jmp ret_thunk`
    /// - 0x10 `ret_thunk`: `ret; int3`
    /// - 0x20 `thunk` (`__x86_indirect_thunk_rax`): `call 2c; pause; lfence;
    ///   jmp 25; 2c: mov %rax,(%rsp); jmp ret_thunk`
    /// - 0x40 `leaf_writer`: `movl $0x0,0x14(%rdi); jmp ret_thunk`
    /// - 0x50 `caller`: `call fentry; mov $0xffffffff82000000,%rdi; call thunk;
    ///   call leaf_writer; movl $0x1,(%rdi); jmp ret_thunk`
    /// - 0x70 `passer`: `call fentry; jmp leaf_writer`
    /// - 0x80 `after_indirect`: `call fentry; call thunk; movl $0x1,(%rdi);
    ///   jmp ret_thunk`
    const CODE: [u8; 149] = [
        0xeb, 0x0e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0xc3, 0xcc, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0xe8, 0x07, 0x00, 0x00, 0x00, 0xf3, 0x90, 0x0f, 0xae, 0xe8, 0xeb, 0xf9, 0x48,
        0x89, 0x04, 0x24, 0xeb, 0xde, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0xc7, 0x47, 0x14, 0x00, 0x00, 0x00, 0x00, 0xeb, 0xc7, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0xe8, 0xab, 0xff, 0xff, 0xff, 0x48, 0xc7, 0xc7, 0x00, 0x00,
        0x00, 0x82, 0xe8, 0xbf, 0xff, 0xff, 0xff, 0xe8, 0xda, 0xff, 0xff, 0xff, 0xc7, 0x07, 0x01,
        0x00, 0x00, 0x00, 0xeb, 0xa2, 0x00, 0x00, 0xe8, 0x8b, 0xff, 0xff, 0xff, 0xeb, 0xc9, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe8, 0x7b, 0xff, 0xff, 0xff, 0xe8, 0x96,
        0xff, 0xff, 0xff, 0xc7, 0x07, 0x01, 0x00, 0x00, 0x00, 0xe9, 0x7b, 0xff, 0xff, 0xff,
    ];

    fn function(name: &'static str, offset: u64, size: u64) -> Symbol<'static> {
        let mut s = Symbol::test_object(name, TEXT + offset, size);
        s.kind = SymbolKind::Function;
        s.section = ".text";
        s
    }

    fn image() -> Image<'static> {
        let mut image = Image::new(PathBuf::from("preserve-test"), "x86_64".into(), 64);
        image.symbols = vec![
            function("fentry", 0x00, 2),
            function("ret_thunk", 0x10, 2),
            function("thunk", 0x20, 0x12),
            function("leaf_writer", 0x40, 9),
            function("caller", 0x50, 0x1e),
            function("passer", 0x70, 7),
            function("after_indirect", 0x80, 0x15),
            Symbol::test_object("obj", 0xffff_ffff_8200_0000, 8),
        ];
        image
    }

    fn named(image: &Image<'static>, i: u32) -> &'static str {
        image.symbols[i as usize].name
    }

    #[test]
    fn a_retpoline_and_a_leaf_that_writes_memory_are_not_preserving() {
        let image = image();
        let code = [CodeSection {
            name: ".text",
            address: TEXT,
            bytes: &CODE,
        }];
        let targets = super::Targets::new(&image);
        let functions: Vec<(u32, u64, &[u8])> = targets
            .functions()
            .map(|(symbol, start, end)| (symbol, start, code[0].range(start, end).unwrap()))
            .collect();
        let kept: Vec<&str> = super::preserving(&targets, &functions)
            .into_iter()
            .map(|i| named(&image, i))
            .collect();
        assert_eq!(kept, ["fentry", "ret_thunk"]);

        let map = access::build(&image, &code, &[]);
        // The address goes to the retpoline (an indirect call), not past it to the
        // writer after it, nor to the return thunk.
        let refs: Vec<(&str, &str, Option<&str>, bool)> = map
            .refs
            .iter()
            .map(|a| match a.kind {
                AccessKind::Address { callee, writes } => (
                    named(&image, a.function),
                    named(&image, a.object),
                    callee.map(|c| named(&image, c)),
                    writes,
                ),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(refs, [("caller", "obj", Some("thunk"), false)]);
        // `passer` hands its argument to `leaf_writer`; after the indirect call,
        // `after_indirect`'s `%rdi` is no longer its argument.
        let mut writers: Vec<(&str, u8)> = map
            .writers
            .iter()
            .map(|w| (named(&image, w.function), w.args))
            .collect();
        writers.sort();
        assert_eq!(writers, [("leaf_writer", 1), ("passer", 1)]);
    }
}
