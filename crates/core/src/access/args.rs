//! Which arguments a function writes through, as its own code shows it: a linear scan
//! that follows each argument register (and plain 64-bit copies of it) until it is
//! overwritten, noting memory writes based on it and calls that receive it unchanged.

use iced_x86::{
    FlowControl, Instruction, InstructionInfoFactory, InstructionInfoOptions, Mnemonic, OpKind,
    Register,
};

use super::regs::{ARGS, ArgFacts, Pass};
use super::targets::Targets;

/// Registers a call may overwrite (System V caller-saved).
const CLOBBERED: [Register; 9] = [
    Register::RAX,
    Register::RCX,
    Register::RDX,
    Register::RSI,
    Register::RDI,
    Register::R8,
    Register::R9,
    Register::R10,
    Register::R11,
];

/// Which argument (1-based; 0: none) each of the 16 general registers still holds.
#[derive(Debug, Clone, Copy)]
struct Holds([u8; 16]);

impl Holds {
    fn at_entry() -> Holds {
        let mut holds = Holds([0; 16]);
        for (i, &r) in ARGS.iter().enumerate() {
            holds.set(r, i as u8 + 1);
        }
        holds
    }

    fn slot(register: Register) -> Option<usize> {
        let full = register.full_register();
        full.is_gpr64()
            .then(|| full as usize - Register::RAX as usize)
            .filter(|&i| i < 16)
    }

    /// The argument `register` holds (0-based).
    fn arg(&self, register: Register) -> Option<u8> {
        let held = self.0[Self::slot(register)?];
        held.checked_sub(1)
    }

    fn set(&mut self, register: Register, held: u8) {
        if let Some(i) = Self::slot(register) {
            self.0[i] = held;
        }
    }

    fn any(&self) -> bool {
        self.0.iter().any(|&h| h != 0)
    }
}

/// The argument facts of the decoded function `insns` starting at `start`. Control
/// flow is ignored: the code is read in address order, and a register stops holding
/// its argument at the first write to it met in that order.
pub(super) fn arg_facts(
    factory: &mut InstructionInfoFactory,
    insns: &[Instruction],
    targets: &Targets,
    start: u64,
) -> ArgFacts {
    let mut facts = ArgFacts::default();
    let mut holds = Holds::at_entry();
    for insn in insns {
        if !holds.any() {
            break;
        }
        if insn.is_invalid() {
            continue;
        }
        step(factory, insn, targets, start, &mut holds, &mut facts);
    }
    facts
        .passes
        .sort_by_key(|p| (p.callee, p.callee_arg, p.own_arg));
    facts.passes.dedup();
    facts
}

/// One instruction: writes through held arguments, arguments handed to a callee, then
/// the registers it overwrites.
fn step(
    factory: &mut InstructionInfoFactory,
    insn: &Instruction,
    targets: &Targets,
    start: u64,
    holds: &mut Holds,
    facts: &mut ArgFacts,
) {
    let info = factory.info_options(insn, InstructionInfoOptions::NONE);
    for m in info.used_memory() {
        if super::regs::writes(m.access())
            && let Some(arg) = holds.arg(m.base())
        {
            facts.writes |= 1 << arg;
        }
    }
    let flow = insn.flow_control();
    let direct = insn.op0_kind() == OpKind::NearBranch64;
    let callee = match flow {
        FlowControl::Call | FlowControl::UnconditionalBranch if direct => {
            targets.function_at(insn.near_branch_target())
        }
        _ => None,
    };
    let preserved = callee.is_some_and(|c| targets.preserves(c));
    if let Some(callee) = callee.filter(|_| insn.near_branch_target() != start && !preserved) {
        for (j, &r) in ARGS.iter().enumerate() {
            if let Some(own_arg) = holds.arg(r) {
                facts.passes.push(Pass {
                    callee,
                    callee_arg: j as u8,
                    own_arg,
                });
            }
        }
    }
    let copied = copy_source(insn).map(|src| holds.arg(src).map_or(0, |a| a + 1));
    for u in info.used_registers() {
        if super::regs::writes(u.access()) {
            holds.set(u.register(), copied.unwrap_or(0));
        }
    }
    if matches!(flow, FlowControl::Call | FlowControl::IndirectCall) && !preserved {
        for r in CLOBBERED {
            holds.set(r, 0);
        }
    }
}

/// The source of a plain 64-bit register-to-register `mov`.
fn copy_source(insn: &Instruction) -> Option<Register> {
    let plain = insn.mnemonic() == Mnemonic::Mov
        && insn.op0_kind() == OpKind::Register
        && insn.op1_kind() == OpKind::Register
        && insn.op0_register().is_gpr64()
        && insn.op1_register().is_gpr64();
    plain.then(|| insn.op1_register())
}
