//! One function's machine code, decoded once: the data it references (each memory
//! operand or address immediate that lands in an object) and, per argument register,
//! whether it writes through it or hands it on to a callee.

use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Instruction, InstructionInfoFactory,
    InstructionInfoOptions, Mnemonic, OpAccess, OpKind, Register,
};

use super::regs::{ARGS, ArgFacts, writes};
use super::targets::{Hit, Targets};
use super::{Access, AccessKind, Form};

/// How far after an address is loaded a call may take it as an argument.
const CALL_WINDOW: usize = 8;

/// A reference whose `Address` kind still waits for the callee's writes to be known.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    pub access: Access,
    /// The callee's argument position the address is passed in.
    pub arg: Option<u8>,
}

/// Operands that land nowhere in data, counted.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Misses {
    pub instructions: u64,
    pub invalid: u64,
    pub to_code: u64,
    pub rip_unresolved: u64,
}

/// Everything one function gives.
#[derive(Debug, Default)]
pub(super) struct Scanned {
    pub refs: Vec<Pending>,
    /// The functions it calls or tail-jumps to directly, sorted, each once.
    pub calls: Vec<u32>,
    /// The functions whose start address it loads (`lea f(%rip)`, `mov $f`): their
    /// address is taken, so they may be called through a pointer.
    pub taken: Vec<u32>,
    pub args: ArgFacts,
    pub misses: Misses,
}

/// A decoder's per-thread state: the info factory and the decoded instructions.
pub(super) struct Scanner<'t> {
    targets: &'t Targets,
    factory: InstructionInfoFactory,
    insns: Vec<Instruction>,
}

/// Where an operand points, and how it spells it.
#[derive(Debug, Clone, Copy)]
struct Target {
    address: u64,
    form: Form,
    indexed: bool,
    percpu: bool,
}

impl<'t> Scanner<'t> {
    pub fn new(targets: &'t Targets) -> Scanner<'t> {
        Scanner {
            targets,
            factory: InstructionInfoFactory::new(),
            insns: Vec::new(),
        }
    }

    /// Decodes `bytes`, the code of `function` at `start`, and reads it.
    pub fn function(&mut self, function: u32, start: u64, bytes: &[u8]) -> Scanned {
        self.decode(start, bytes);
        let mut out = Scanned::default();
        out.misses.instructions = self.insns.len() as u64;
        for i in 0..self.insns.len() {
            let insn = self.insns[i];
            if insn.is_invalid() {
                out.misses.invalid += 1;
                continue;
            }
            if let Some(callee) = self.direct_callee(&insn) {
                out.calls.push(callee);
            }
            match self.reference(function, i, &insn, &mut out.misses) {
                Some(Ok(pending)) => out.refs.push(pending),
                Some(Err(taken)) => out.taken.push(taken),
                None => {}
            }
        }
        for list in [&mut out.calls, &mut out.taken] {
            list.sort_unstable();
            list.dedup();
        }
        out.args = super::args::arg_facts(&mut self.factory, &self.insns, self.targets, start);
        out
    }

    fn decode(&mut self, start: u64, bytes: &[u8]) {
        self.insns.clear();
        let mut decoder = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
        let mut insn = Instruction::default();
        while decoder.can_decode() {
            decoder.decode_out(&mut insn);
            self.insns.push(insn);
        }
    }

    /// The data reference of instruction `i`, if its operand lands in an object; or
    /// (`Err`) the function whose start it names, when it names one.
    fn reference(
        &mut self,
        function: u32,
        i: usize,
        insn: &Instruction,
        misses: &mut Misses,
    ) -> Option<Result<Pending, u32>> {
        let (target, loaded) = operand(insn)?;
        let Some(hit) = self.targets.data(target.address, target.percpu) else {
            if self.targets.in_code(target.address) {
                misses.to_code += 1;
                return self.targets.function_at(target.address).map(Err);
            } else if target.form == Form::RipRelative {
                misses.rip_unresolved += 1;
            }
            return None;
        };
        let (kind, arg) = match loaded {
            Some(register) => self.address_kind(i, register),
            None => (self.memory_kind(insn)?, None),
        };
        Some(Ok(Pending {
            access: access(function, insn, target, hit, kind),
            arg,
        }))
    }

    /// How a memory operand is used; `None` when it is not accessed (a hint, a nop).
    fn memory_kind(&mut self, insn: &Instruction) -> Option<AccessKind> {
        if insn.has_lock_prefix() || insn.mnemonic() == Mnemonic::Xchg {
            return Some(AccessKind::Atomic);
        }
        let info = self
            .factory
            .info_options(insn, InstructionInfoOptions::NO_REGISTER_USAGE);
        let base = match insn.memory_base() {
            Register::RIP => Register::None,
            base => base,
        };
        let used = info
            .used_memory()
            .iter()
            .find(|m| m.base() == base && m.displacement() == insn.memory_displacement64())?;
        match used.access() {
            OpAccess::Read | OpAccess::CondRead => Some(AccessKind::Read),
            OpAccess::Write | OpAccess::CondWrite => Some(AccessKind::Write),
            OpAccess::ReadWrite | OpAccess::ReadCondWrite => Some(AccessKind::ReadWrite),
            _ => None,
        }
    }

    /// An address loaded into `register`: the callee it is passed to within the next
    /// few instructions of straight-line code, and in which argument.
    fn address_kind(&mut self, i: usize, register: Register) -> (AccessKind, Option<u8>) {
        let none = (
            AccessKind::Address {
                callee: None,
                writes: false,
            },
            None,
        );
        let end = self.insns.len().min(i + 1 + CALL_WINDOW);
        for k in i + 1..end {
            let insn = self.insns[k];
            if let Some(callee) = self.direct_callee(&insn) {
                if self.targets.preserves(callee) && insn.flow_control() == FlowControl::Call {
                    continue;
                }
                let Some(arg) = ARGS.iter().position(|&r| r == register) else {
                    return none;
                };
                let kind = AccessKind::Address {
                    callee: Some(callee),
                    writes: false,
                };
                return (kind, u8::try_from(arg).ok());
            }
            if insn.flow_control() != FlowControl::Next || self.writes_register(&insn, register) {
                return none;
            }
        }
        none
    }

    /// The function a call or a jump goes to when it goes to the start of one.
    fn direct_callee(&self, insn: &Instruction) -> Option<u32> {
        let branch = matches!(
            insn.flow_control(),
            FlowControl::Call | FlowControl::UnconditionalBranch
        );
        if !branch || insn.op0_kind() != OpKind::NearBranch64 {
            return None;
        }
        self.targets.function_at(insn.near_branch_target())
    }

    fn writes_register(&mut self, insn: &Instruction, register: Register) -> bool {
        let info = self
            .factory
            .info_options(insn, InstructionInfoOptions::NO_MEMORY_USAGE);
        info.used_registers()
            .iter()
            .any(|u| writes(u.access()) && u.register().full_register() == register)
    }
}

/// The operand of `insn` that may name data: a memory operand's address, or an
/// address put in a register (`lea`, `mov $imm`), with that register.
fn operand(insn: &Instruction) -> Option<(Target, Option<Register>)> {
    let memory = (0..insn.op_count()).any(|op| insn.op_kind(op) == OpKind::Memory);
    if memory {
        let target = memory_target(insn)?;
        let loaded =
            (insn.mnemonic() == Mnemonic::Lea).then(|| insn.op0_register().full_register());
        return Some((target, loaded));
    }
    let immediate = matches!(
        insn.op1_kind(),
        OpKind::Immediate32to64 | OpKind::Immediate64 | OpKind::Immediate32
    );
    if insn.mnemonic() == Mnemonic::Mov && insn.op0_kind() == OpKind::Register && immediate {
        let target = Target {
            address: insn.immediate(1),
            form: Form::Immediate,
            indexed: false,
            percpu: false,
        };
        return Some((target, Some(insn.op0_register().full_register())));
    }
    None
}

/// The address a memory operand computes when it is fixed: RIP-relative, or an
/// absolute 32-bit (sign-extended) or 64-bit displacement. `lea` ignores segments.
fn memory_target(insn: &Instruction) -> Option<Target> {
    let percpu = insn.memory_segment() == Register::GS && insn.mnemonic() != Mnemonic::Lea;
    if insn.is_ip_rel_memory_operand() {
        return Some(Target {
            address: insn.ip_rel_memory_address(),
            form: Form::RipRelative,
            indexed: false,
            percpu,
        });
    }
    if insn.memory_displ_size() < 4 {
        return None;
    }
    Some(Target {
        address: insn.memory_displacement64(),
        form: Form::Absolute,
        indexed: insn.memory_base() != Register::None || insn.memory_index() != Register::None,
        percpu,
    })
}

fn access(function: u32, insn: &Instruction, target: Target, hit: Hit, kind: AccessKind) -> Access {
    let size = match kind {
        AccessKind::Address { .. } => 0,
        _ => u8::try_from(insn.memory_size().size()).unwrap_or(u8::MAX),
    };
    Access {
        insn: insn.ip(),
        function,
        object: hit.object,
        offset: hit.offset,
        size,
        indexed: target.indexed,
        form: target.form,
        kind,
    }
}
