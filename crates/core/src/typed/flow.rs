//! One function's machine code read with the type of every register: what DWARF says
//! a register holds (a parameter or local, inlined scopes included), carried forward
//! through register copies, loads of pointer members and of typed globals and per-CPU
//! pointers, `lea` of a member, constant pointer arithmetic (`container_of`), stack
//! spills and reloads, and per-CPU addressing (`__per_cpu_offset[cpu]`: remote;
//! `this_cpu_off`: local). Forward branches meet the fall-through state (a register
//! keeps its type only when every path agrees); a loop head keeps only what DWARF says;
//! a call ends the caller-saved registers. Every memory operand through a register
//! other than the stack's gives a typed access or a reason it has none.

use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Instruction, InstructionInfoFactory,
    InstructionInfoOptions, Mnemonic, OpAccess, OpKind, Register,
};
use rustc_hash::FxHashMap;

use super::ctypes::{Name, Node, Span, Types};
use super::symbols::Symbols;
use super::unit::{Fact, UnitFacts};
use crate::model::access::AccessKind;
use crate::model::typed::{Coverage, NONE, Untyped};

/// What a register (or a stack slot) holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val<'d> {
    Unknown(Untyped),
    /// A pointer to `bias` bytes into a `ty` (stripped; `named` a typedef's name for
    /// an anonymous struct), into per-CPU object `percpu` when not `NONE`.
    Ptr {
        ty: u32,
        named: Name<'d>,
        bias: i64,
        percpu: u32,
        remote: bool,
        /// Moved by an unknown amount (`t + 16 * i`): only an array member is named.
        varying: bool,
    },
    /// The per-CPU offset of `offset` bytes into per-CPU object `var` of type `ty`.
    PcpuOff {
        var: u32,
        ty: u32,
        offset: i64,
    },
    /// A CPU's per-CPU base: another CPU's (`__per_cpu_offset[cpu]`) or this one's.
    PcpuBase {
        remote: bool,
    },
}

const REGS: usize = 16;
/// Passes over a part with loops before its loop heads give up on what changes in them.
const PASSES: usize = 4;

/// What a pass assumes at loop heads: the back edges' states of the pass before (none
/// in the first), or only what the loop body does not change.
#[derive(Clone, Copy)]
enum Heads<'h, 'd> {
    Assumed(Option<&'h FxHashMap<u64, State<'d>>>),
    Kills,
}
/// Caller-saved registers in iced-x86's order: RAX RCX RDX RSI RDI R8-R11.
const CLOBBERED: [usize; 9] = [0, 1, 2, 6, 7, 8, 9, 10, 11];
const RSP: usize = 4;
const RBP: usize = 5;

#[derive(Debug, Clone, PartialEq)]
struct State<'d> {
    regs: [Val<'d>; REGS],
    /// Stack slots by offset from the stack pointer at entry.
    slots: Vec<(i64, Val<'d>)>,
    /// The stack pointer's offset from its value at entry, while known.
    rsp: Option<i64>,
    /// Set by `mov %rsp,%rbp`: the frame pointer's offset from the entry stack pointer.
    rbp: Option<i64>,
}

impl<'d> State<'d> {
    fn unknown(why: Untyped) -> State<'d> {
        State {
            regs: [Val::Unknown(why); REGS],
            slots: Vec::new(),
            rsp: Some(0),
            rbp: None,
        }
    }

    fn meet(&mut self, other: &State<'d>) {
        for (a, b) in self.regs.iter_mut().zip(other.regs.iter()) {
            if a != b {
                *a = match (*a, *b) {
                    (Val::Unknown(x), Val::Unknown(_)) => Val::Unknown(x),
                    _ => Val::Unknown(Untyped::Join),
                };
            }
        }
        self.slots.retain(|s| other.slots.contains(s));
        if self.rsp != other.rsp {
            self.rsp = None;
            self.slots.clear();
        }
        if self.rbp != other.rbp {
            self.rbp = None;
        }
    }
}

/// One typed access found, with unit-local names.
#[derive(Debug, Clone, Copy)]
pub(super) struct Found {
    pub ty_name: u32,
    pub offset: u32,
    pub function: u32,
    pub insn: u64,
    pub member: u32,
    pub size: u8,
    pub kind: AccessKind,
    pub cold: bool,
    pub percpu: u32,
    pub remote: bool,
}

/// What a unit's scan gives.
#[derive(Debug, Default)]
pub(super) struct Scanned<'d> {
    pub names: Vec<&'d str>,
    pub paths: Vec<String>,
    pub found: Vec<Found>,
    pub coverage: Coverage,
    /// (function, operands, typed), in scan order.
    pub functions: Vec<(u32, u32, u32)>,
}

/// A per-thread scanner of one unit's functions.
pub(super) struct Scan<'a, 'd> {
    unit: &'a UnitFacts<'d>,
    symbols: &'a Symbols<'a>,
    factory: InstructionInfoFactory,
    insns: Vec<Instruction>,
    out: Scanned<'d>,
    name_ids: FxHashMap<&'d str, u32>,
    path_ids: FxHashMap<(u32, Span, bool), u32>,
    path_index: FxHashMap<String, u32>,
    /// The function and part being scanned.
    function: u32,
    cold: bool,
    here: (u32, u32),
}

impl<'a, 'd> Scan<'a, 'd> {
    pub fn new(unit: &'a UnitFacts<'d>, symbols: &'a Symbols<'a>) -> Scan<'a, 'd> {
        Scan {
            unit,
            symbols,
            factory: InstructionInfoFactory::new(),
            insns: Vec::new(),
            out: Scanned::default(),
            name_ids: FxHashMap::default(),
            path_ids: FxHashMap::default(),
            path_index: FxHashMap::default(),
            function: 0,
            cold: false,
            here: (0, 0),
        }
    }

    pub fn finish(self) -> Scanned<'d> {
        self.out
    }

    fn types(&self) -> &'a Types<'d> {
        &self.unit.types
    }

    /// Scans one function: `parts` are its ranges with their bytes and whether each is
    /// a `.cold` part; `function` the symbol credited.
    pub fn function(&mut self, function: u32, parts: &[(u64, &[u8], bool)]) {
        self.function = function;
        self.here = (0, 0);
        for &(start, bytes, cold) in parts {
            self.cold = cold;
            self.part(start, bytes);
        }
        self.out
            .functions
            .push((function, self.here.0, self.here.1));
    }

    fn part(&mut self, start: u64, bytes: &[u8]) {
        let end = start + bytes.len() as u64;
        self.insns.clear();
        let mut decoder = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
        let mut insn = Instruction::default();
        while decoder.can_decode() {
            decoder.decode_out(&mut insn);
            self.insns.push(insn);
        }
        let targets = self.targets(start, end);
        let facts = self.facts_in(start, end);
        let loops = targets.iter().any(|t| t.1.is_some());
        let mark = (self.out.found.len(), self.out.coverage, self.here);
        // Loop heads first assume what enters them, then what the back edges brought
        // the pass before, until that settles (each pass only loses types, so it does);
        // the settled pass's accesses stand.
        let mut heads: Option<FxHashMap<u64, State<'d>>> = None;
        for _ in 0..PASSES {
            let back = self.pass(end, &targets, &facts, Heads::Assumed(heads.as_ref()));
            if !loops || heads.as_ref() == Some(&back) {
                return;
            }
            self.out.found.truncate(mark.0);
            self.out.coverage = mark.1;
            self.here = mark.2;
            heads = Some(back);
        }
        // Not settled: each loop head keeps only what its body does not change.
        self.pass(end, &targets, &facts, Heads::Kills);
    }

    /// One pass over the part's instructions; returns, per loop head, the state met over
    /// the branches back to it.
    fn pass(
        &mut self,
        end: u64,
        targets: &[(u64, Option<u64>)],
        facts: &[Fact],
        heads: Heads<'_, 'd>,
    ) -> FxHashMap<u64, State<'d>> {
        let mut active: Vec<Fact> = Vec::new();
        let mut next_fact = 0;
        let mut pending: FxHashMap<u64, State<'d>> = FxHashMap::default();
        let mut back: FxHashMap<u64, State<'d>> = FxHashMap::default();
        let mut next_target = 0;
        let mut state = State::unknown(Untyped::NoLocation);
        let mut live = true;
        for k in 0..self.insns.len() {
            let insn = self.insns[k];
            let ip = insn.ip();
            while next_target < targets.len() && targets[next_target].0 < ip {
                next_target += 1;
            }
            let target = targets
                .get(next_target)
                .is_some_and(|t| t.0 == ip)
                .then_some(next_target);
            let incoming = target.and_then(|_| pending.remove(&ip));
            match (target.and_then(|t| targets[t].1), heads) {
                (Some(last), Heads::Kills) => {
                    let kills = self.loop_kills(k, last, &state);
                    loop_head(&mut state, live, incoming, &kills);
                }
                (Some(_), Heads::Assumed(assumed)) => {
                    join(&mut state, live, true, incoming);
                    if let Some(h) = assumed.and_then(|a| a.get(&ip)) {
                        state.meet(h);
                    }
                }
                (None, _) => join(&mut state, live, target.is_some(), incoming),
            }
            // What DWARF says at this address.
            while next_fact < facts.len() && facts[next_fact].lo <= ip {
                active.push(facts[next_fact]);
                next_fact += 1;
            }
            active.retain(|f| f.hi > ip);
            self.apply_facts(&active, ip, &mut state);
            if insn.is_invalid() {
                live = false;
                continue;
            }
            self.step(&insn, &mut state);
            self.loaded_variable(&insn, facts, &mut state);
            let flow = insn.flow_control();
            if matches!(
                flow,
                FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch
            ) && insn.op0_kind() == OpKind::NearBranch64
            {
                let t = insn.near_branch_target();
                let to = match t > ip {
                    true if t < end => Some(&mut pending),
                    false if targets.binary_search_by_key(&t, |x| x.0).is_ok() => Some(&mut back),
                    _ => None,
                };
                if let Some(to) = to {
                    match to.get_mut(&t) {
                        Some(p) => p.meet(&state),
                        None => {
                            to.insert(t, state.clone());
                        }
                    }
                }
            }
            live = !matches!(
                flow,
                FlowControl::UnconditionalBranch
                    | FlowControl::IndirectBranch
                    | FlowControl::Return
                    | FlowControl::Exception
            ) && insn.mnemonic() != Mnemonic::Ud2;
        }
        back
    }

    /// The branch targets inside `[start, end)`, each with the last instruction that
    /// jumps back to it, when one does (a loop head).
    fn targets(&self, start: u64, end: u64) -> Vec<(u64, Option<u64>)> {
        let mut targets: Vec<(u64, Option<u64>)> = Vec::new();
        for i in &self.insns {
            if matches!(
                i.flow_control(),
                FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch
            ) && i.op0_kind() == OpKind::NearBranch64
            {
                let t = i.near_branch_target();
                if t >= start && t < end {
                    targets.push((t, (t <= i.ip()).then_some(i.ip())));
                }
            }
        }
        targets.sort_unstable();
        targets.dedup_by(|b, a| {
            if a.0 == b.0 {
                a.1 = a.1.max(b.1);
                true
            } else {
                false
            }
        });
        targets
    }

    /// What the instructions from `first` up to the one at `last` (a loop's body)
    /// change, with the stack pointer as it is at the loop head.
    fn loop_kills(&mut self, first: usize, last: u64, state: &State<'d>) -> Kills {
        let mut kills = Kills {
            regs: 0,
            slots: Vec::new(),
            rsp: false,
        };
        for k in first..self.insns.len() {
            let insn = self.insns[k];
            if insn.ip() > last {
                break;
            }
            if insn.mnemonic() == Mnemonic::Call {
                for r in CLOBBERED {
                    kills.regs |= 1 << r;
                }
                continue;
            }
            if insn.op0_kind() == OpKind::Memory
                && Self::stack_base(insn.memory_base(), state)
                && !matches!(insn.mnemonic(), Mnemonic::Cmp | Mnemonic::Test)
            {
                match self.stack_slot(&insn, state) {
                    Some(at) => kills.slots.push(at),
                    None => kills.rsp = true,
                }
            }
            let written = self.written(&insn);
            kills.rsp |= written & (1 << RSP) != 0;
            kills.regs |= written & !(1 << RSP);
        }
        kills
    }

    /// The unit's facts that start in `[start, end)` (facts lie inside their function).
    fn facts_in(&self, start: u64, end: u64) -> Vec<Fact> {
        let facts = &self.unit.facts;
        let from = facts.partition_point(|f| f.lo < start);
        let to = facts.partition_point(|f| f.lo < end);
        // Facts that began before the part and still hold in it (a scope starting at
        // the entry of a parent range).
        let mut out: Vec<Fact> = facts[..from]
            .iter()
            .rev()
            .take(64)
            .filter(|f| f.hi > start)
            .copied()
            .collect();
        out.extend_from_slice(&facts[from..to]);
        out.sort_unstable_by_key(|f| f.lo);
        out
    }

    /// Sets each register DWARF describes here: the innermost scope's variable, unless
    /// another view of the same register (an outer variable, or the data flow) sees a
    /// struct that embeds the innermost one's type at that very place (`&f->f_count`
    /// handed to an inlined `atomic_long_inc(v)` stays `f`'s member).
    fn apply_facts(&self, active: &[Fact], _ip: u64, state: &mut State<'d>) {
        let mut best: [Option<&Fact>; REGS] = [None; REGS];
        for f in active.iter().filter(|f| f.load.is_none()) {
            let r = usize::from(f.reg);
            if r >= REGS || r == RSP {
                continue;
            }
            if best[r].is_none_or(|b| f.depth >= b.depth) {
                best[r] = Some(f);
            }
        }
        for (r, fact) in best.iter().enumerate() {
            let Some(f) = fact else { continue };
            let ty = f.pointee;
            let bias = -i64::from(f.bias);
            if self.embeds(state.regs[r], ty, bias) {
                continue;
            }
            let outer = active
                .iter()
                .filter(|o| usize::from(o.reg) == r && o.pointee != ty)
                .find_map(|o| {
                    let outer_ty = o.pointee;
                    let view = Val::Ptr {
                        ty: outer_ty,
                        named: self.named(o.ty),
                        bias: -i64::from(o.bias),
                        percpu: NONE,
                        remote: false,
                        varying: false,
                    };
                    (!std::ptr::eq(o, *f) && self.embeds(view, ty, bias)).then_some(view)
                });
            if r == RBP {
                state.rbp = None;
            }
            state.regs[r] = outer.unwrap_or(Val::Ptr {
                ty,
                named: self.named(f.ty),
                bias,
                percpu: NONE,
                remote: false,
                varying: false,
            });
        }
    }

    /// Whether `view` (a register's value) points where a pointer to `inner` with
    /// `bias` does, into a struct that holds an `inner` there (or is one).
    fn embeds(&self, view: Val<'d>, inner: u32, bias: i64) -> bool {
        let Val::Ptr { ty, bias: b, .. } = view else {
            return false;
        };
        // The register is `outer + b` and `inner + bias`: `inner` starts at `b - bias`.
        let at = b - bias;
        at >= 0 && self.types().holds_type(ty, at as u64, inner)
    }

    /// The typedef name a pointer type `ty`'s target is reached through.
    fn named(&self, ty: u32) -> Name<'d> {
        let types = self.types();
        let (p, _) = types.strip(ty);
        match types.nodes.get(&p) {
            Some(Node::Pointer(target)) => types.strip(*target).1,
            _ => Name::None,
        }
    }

    /// A load that DWARF says yields a variable's value plus a constant: a pointer read
    /// from a member and turned into its container (`container_of(p->next, ...)`),
    /// described over the load or from right after it.
    fn loaded_variable(&self, insn: &Instruction, facts: &[Fact], state: &mut State<'d>) {
        if insn.mnemonic() != Mnemonic::Mov
            || insn.op1_kind() != OpKind::Memory
            || insn.memory_size().size() != 8
            || insn.memory_index() != Register::None
        {
            return;
        }
        let (Some(dst), Some(base)) = (
            reg_index(insn.op0_register()),
            reg_index(insn.memory_base()),
        ) else {
            return;
        };
        let (ip, next) = (insn.ip(), insn.next_ip());
        let disp = insn.memory_displacement64() as i64;
        let upto = facts.partition_point(|f| f.lo <= next);
        let fact = facts[..upto].iter().rev().find(|f| {
            f.hi > ip && usize::from(f.reg) == base && f.load.is_some_and(|k| i64::from(k) == disp)
        });
        if let Some(f) = fact
            && !self.embeds(state.regs[dst], f.pointee, -i64::from(f.bias))
        {
            state.regs[dst] = Val::Ptr {
                ty: f.pointee,
                named: self.named(f.ty),
                bias: -i64::from(f.bias),
                percpu: NONE,
                remote: false,
                varying: false,
            };
        }
    }

    /// Reads one instruction: its memory operand's access, then what it writes.
    fn step(&mut self, insn: &Instruction, state: &mut State<'d>) {
        let memory = (0..insn.op_count()).any(|op| insn.op_kind(op) == OpKind::Memory);
        let mnemonic = insn.mnemonic();
        if memory && mnemonic != Mnemonic::Lea && !is_hint(mnemonic) {
            self.operand(insn, state);
        }
        self.update(insn, state);
    }

    /// Whether the memory operand's base is the stack: `%rsp`, or `%rbp` once it holds
    /// the frame.
    fn stack_base(base: Register, state: &State<'d>) -> bool {
        base == Register::RSP || (base == Register::RBP && state.rbp.is_some())
    }

    fn operand(&mut self, insn: &Instruction, state: &State<'d>) {
        let base = insn.memory_base();
        if base == Register::None || base == Register::RIP || base == Register::EIP {
            return;
        }
        if Self::stack_base(base, state) {
            self.out.coverage.stack += 1;
            return;
        }
        if reg_index(base).is_none() {
            return;
        }
        self.here.0 += 1;
        let (ty, named, offset, percpu, remote, indexed) = match self.effective(insn, state) {
            Ok(e) => e,
            Err(why) => {
                self.out.coverage.miss(why);
                return;
            }
        };
        let types = self.types();
        let size = types.size(ty).unwrap_or(0);
        if offset < 0 || (size > 0 && offset as u64 >= size && !types.runs_past(ty)) {
            self.out.coverage.miss(Untyped::Other);
            return;
        }
        let aggregate = types.is_aggregate(ty);
        let span = Span {
            offset: offset as u64,
            size: insn.memory_size().size() as u64,
            mask: mask_of(insn),
        };
        // A pointer moved by an unknown amount names only an element of an array.
        let varying = [insn.memory_base(), insn.memory_index()].iter().any(|r| {
            reg_index(*r).is_some_and(|i| matches!(state.regs[i], Val::Ptr { varying: true, .. }))
        });
        if varying && (!aggregate || !types.held_span(ty, span).path.contains('[')) {
            self.out.coverage.miss(Untyped::Other);
            return;
        }
        self.here.1 += 1;
        self.out.coverage.operands += 1;
        if aggregate {
            self.out.coverage.members += 1;
        } else {
            self.out.coverage.scalars += 1;
        }
        if !aggregate && percpu == NONE {
            return;
        }
        let Some(name) = types.name(ty, named) else {
            return;
        };
        let Some(kind) = self.kind(insn) else {
            return;
        };
        let member = self.path(ty, span, indexed);
        let ty_name = self.name_id(name);
        let (function, cold) = (self.function, self.cold);
        self.out.found.push(Found {
            ty_name,
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
            function,
            insn: insn.ip(),
            member,
            size: u8::try_from(insn.memory_size().size()).unwrap_or(u8::MAX),
            kind,
            cold,
            percpu,
            remote,
        });
    }

    /// The pointer a memory operand goes through, and the offset into its type: its
    /// base register's type, or its index register's (scale 1), or a per-CPU object
    /// reached from a CPU's base (`__per_cpu_offset[cpu]` or `this_cpu_off`) plus its
    /// per-CPU offset, in the displacement or in the other register.
    #[allow(clippy::type_complexity)]
    fn effective(
        &self,
        insn: &Instruction,
        state: &State<'d>,
    ) -> Result<(u32, Name<'d>, i64, u32, bool, bool), Untyped> {
        let value =
            |r: Register| reg_index(r).map_or(Val::Unknown(Untyped::Other), |i| state.regs[i]);
        let base = value(insn.memory_base());
        let index_reg = insn.memory_index();
        let index = match index_reg {
            Register::None => None,
            r => Some(value(r)),
        };
        let disp = insn.memory_displacement64() as i64;
        let scale1 = insn.memory_index_scale() == 1;
        let (pointer, indexed) = match (base, index) {
            (Val::Ptr { .. }, _) => (base, index.is_some()),
            (Val::PcpuBase { .. }, None) => (offset_by(self, base, disp), false),
            (Val::PcpuBase { .. } | Val::PcpuOff { .. }, Some(i)) if scale1 => {
                (offset_by(self, combine(self, base, i), disp), false)
            }
            (_, Some(i @ Val::Ptr { .. })) if scale1 => (i, true),
            (Val::Unknown(why), _) => return Err(why),
            _ => return Err(Untyped::Other),
        };
        // A per-CPU pointer found here already holds the displacement.
        let disp = match base {
            Val::PcpuBase { .. } | Val::PcpuOff { .. } => 0,
            _ => disp,
        };
        match pointer {
            // A pointer into a member, indexed back from a later element
            // (`memcpy`'s tail `-8(%base,%len)`): the member it points into.
            Val::Ptr {
                ty,
                named,
                bias,
                percpu,
                remote,
                varying,
            } if (indexed || varying) && disp < 0 && bias > 0 => {
                Ok((ty, named, bias, percpu, remote, true))
            }
            Val::Ptr {
                ty,
                named,
                bias,
                percpu,
                remote,
                varying,
            } => Ok((
                ty,
                named,
                bias.wrapping_add(disp),
                percpu,
                remote,
                indexed || varying,
            )),
            Val::Unknown(why) => Err(why),
            _ => Err(Untyped::Other),
        }
    }

    fn name_id(&mut self, name: &'d str) -> u32 {
        let next = self.out.names.len() as u32;
        *self.name_ids.entry(name).or_insert_with(|| {
            self.out.names.push(name);
            next
        })
    }

    /// The member path at `offset` of `ty`, interned; `NONE` in padding.
    fn path(&mut self, ty: u32, span: Span, indexed: bool) -> u32 {
        if let Some(&id) = self.path_ids.get(&(ty, span, indexed)) {
            return id;
        }
        let held = self.unit.types.held_span(ty, span);
        let id = if held.path.is_empty() {
            NONE
        } else {
            let path = if indexed {
                any_element(&held.path)
            } else {
                held.path
            };
            let next = self.out.paths.len() as u32;
            match self.path_index.get(&path) {
                Some(&id) => id,
                None => {
                    self.path_index.insert(path.clone(), next);
                    self.out.paths.push(path);
                    next
                }
            }
        };
        self.path_ids.insert((ty, span, indexed), id);
        id
    }

    /// How the memory operand is used; `None` when it is not accessed.
    fn kind(&mut self, insn: &Instruction) -> Option<AccessKind> {
        let mnemonic = insn.mnemonic();
        if insn.has_lock_prefix() || mnemonic == Mnemonic::Xchg {
            return Some(AccessKind::Atomic);
        }
        match mnemonic {
            Mnemonic::Mov | Mnemonic::Movzx | Mnemonic::Movsx | Mnemonic::Movsxd => {
                return Some(if insn.op0_kind() == OpKind::Memory {
                    AccessKind::Write
                } else {
                    AccessKind::Read
                });
            }
            Mnemonic::Cmp | Mnemonic::Test => return Some(AccessKind::Read),
            _ => {}
        }
        let info = self
            .factory
            .info_options(insn, InstructionInfoOptions::NO_REGISTER_USAGE);
        let used = info
            .used_memory()
            .iter()
            .find(|m| m.base() == insn.memory_base())?;
        match used.access() {
            OpAccess::Read | OpAccess::CondRead => Some(AccessKind::Read),
            OpAccess::Write | OpAccess::CondWrite => Some(AccessKind::Write),
            OpAccess::ReadWrite | OpAccess::ReadCondWrite => Some(AccessKind::ReadWrite),
            _ => None,
        }
    }

    /// What `insn` leaves in the registers and stack slots.
    fn update(&mut self, insn: &Instruction, state: &mut State<'d>) {
        let mnemonic = insn.mnemonic();
        let op0 = insn.op0_kind();
        let dst = (op0 == OpKind::Register)
            .then(|| insn.op0_register())
            .filter(|r| r.is_gpr64())
            .and_then(reg_index);
        match (mnemonic, dst) {
            (Mnemonic::Call, _) => {
                for r in CLOBBERED {
                    state.regs[r] = Val::Unknown(Untyped::Call);
                }
                return;
            }
            (Mnemonic::Push, _) => {
                let v = match insn.op0_kind() {
                    OpKind::Register => insn.op0_register().full_register(),
                    _ => Register::None,
                };
                if let Some(rsp) = state.rsp.as_mut() {
                    *rsp -= 8;
                    let at = *rsp;
                    let val = reg_index(v).map_or(Val::Unknown(Untyped::Other), |r| state.regs[r]);
                    set_slot(state, at, val);
                }
                return;
            }
            (Mnemonic::Pop, Some(d)) => {
                let val = state
                    .rsp
                    .and_then(|at| slot(state, at))
                    .unwrap_or(Val::Unknown(Untyped::Indirect));
                state.regs[d] = val;
                if let Some(rsp) = state.rsp.as_mut() {
                    *rsp += 8;
                }
                if d == RBP {
                    state.rbp = None;
                }
                return;
            }
            (Mnemonic::Mov, Some(RBP))
                if insn.op1_kind() == OpKind::Register && insn.op1_register() == Register::RSP =>
            {
                state.rbp = state.rsp;
                state.regs[RBP] = Val::Unknown(Untyped::Other);
                return;
            }
            (Mnemonic::Sub | Mnemonic::Add, Some(RSP)) if is_immediate(insn.op1_kind()) => {
                let imm = insn.immediate(1) as i64;
                if let Some(rsp) = state.rsp.as_mut() {
                    *rsp = if mnemonic == Mnemonic::Sub {
                        rsp.wrapping_sub(imm)
                    } else {
                        rsp.wrapping_add(imm)
                    };
                }
                return;
            }
            (_, Some(RSP)) => {
                state.rsp = None;
                state.slots.clear();
                return;
            }
            _ => {}
        }
        if let Some(d) = dst {
            let val = self.value(insn, state, d);
            state.regs[d] = val;
            if d == RBP {
                state.rbp = None;
            }
            return;
        }
        if op0 == OpKind::Memory && Self::stack_base(insn.memory_base(), state) {
            let at = self.stack_slot(insn, state);
            match (mnemonic, at) {
                (Mnemonic::Mov, Some(at))
                    if insn.op1_kind() == OpKind::Register && insn.op1_register().is_gpr64() =>
                {
                    let val = reg_index(insn.op1_register())
                        .map_or(Val::Unknown(Untyped::Other), |r| state.regs[r]);
                    set_slot(state, at, val);
                }
                (_, Some(at)) => {
                    let size = insn.memory_size().size() as i64;
                    state
                        .slots
                        .retain(|s| s.0 + 8 <= at || s.0 >= at + size.max(1));
                }
                (_, None) => {}
            }
        }
        self.clobber_others(insn, state, dst);
    }

    /// Registers written by an instruction not followed above become unknown.
    fn clobber_others(&mut self, insn: &Instruction, state: &mut State<'d>, dst: Option<usize>) {
        let mnemonic = insn.mnemonic();
        if matches!(
            mnemonic,
            Mnemonic::Cmp
                | Mnemonic::Test
                | Mnemonic::Jmp
                | Mnemonic::Je
                | Mnemonic::Jne
                | Mnemonic::Nop
                | Mnemonic::Bt
                | Mnemonic::Ret
        ) || insn.flow_control() == FlowControl::ConditionalBranch
        {
            return;
        }
        if dst.is_none() && insn.op0_kind() == OpKind::Memory && mnemonic == Mnemonic::Mov {
            return;
        }
        let written = self.written(insn);
        for (r, v) in state.regs.iter_mut().enumerate() {
            if r != RSP && written & (1 << r) != 0 {
                *v = Val::Unknown(Untyped::Other);
            }
        }
        if written & (1 << RBP) != 0 {
            state.rbp = None;
        }
    }

    /// The 64-bit registers `insn` writes, a bit each (iced-x86's order).
    fn written(&mut self, insn: &Instruction) -> u16 {
        let info = self
            .factory
            .info_options(insn, InstructionInfoOptions::NO_MEMORY_USAGE);
        let mut mask = 0;
        for u in info.used_registers() {
            if matches!(
                u.access(),
                OpAccess::Write
                    | OpAccess::CondWrite
                    | OpAccess::ReadWrite
                    | OpAccess::ReadCondWrite
            ) && let Some(r) = reg_index(u.register().full_register())
            {
                mask |= 1 << r;
            }
        }
        mask
    }

    /// The stack slot a stack-based memory operand names (offset from the entry stack
    /// pointer), when the stack pointer is known.
    fn stack_slot(&self, insn: &Instruction, state: &State<'d>) -> Option<i64> {
        if insn.memory_index() != Register::None {
            return None;
        }
        let disp = insn.memory_displacement64() as i64;
        match insn.memory_base() {
            Register::RSP => Some(state.rsp? + disp),
            Register::RBP => Some(state.rbp? + disp),
            _ => None,
        }
    }

    /// The value an instruction writing the 64-bit register `d` leaves in it.
    fn value(&mut self, insn: &Instruction, state: &State<'d>, d: usize) -> Val<'d> {
        let mnemonic = insn.mnemonic();
        let op1 = insn.op1_kind();
        match mnemonic {
            Mnemonic::Mov => match op1 {
                OpKind::Register => reg_index(insn.op1_register())
                    .filter(|_| insn.op1_register().is_gpr64())
                    .map_or(Val::Unknown(Untyped::Other), |s| state.regs[s]),
                OpKind::Memory if insn.memory_size().size() == 8 => self.loaded(insn, state),
                OpKind::Memory => Val::Unknown(Untyped::Indirect),
                k if is_immediate(k) => self.address(insn.immediate(1), false),
                _ => Val::Unknown(Untyped::Other),
            },
            Mnemonic::Lea => self.lea(insn, state),
            Mnemonic::Add | Mnemonic::Sub => self.arithmetic(insn, state, d),
            _ => {
                // Anything else: the written register is unknown; `xchg reg,reg` and
                // others are rare enough.
                Val::Unknown(Untyped::Other)
            }
        }
    }

    /// A value loaded from memory (8 bytes).
    fn loaded(&mut self, insn: &Instruction, state: &State<'d>) -> Val<'d> {
        let base = insn.memory_base();
        let disp = insn.memory_displacement64();
        if insn.memory_segment() == Register::GS && base == Register::None
            || base == Register::RIP && insn.memory_segment() == Register::GS
        {
            let address = if base == Register::RIP {
                insn.ip_rel_memory_address()
            } else {
                disp
            };
            if self.symbols.is_this_cpu_off(address) {
                return Val::PcpuBase { remote: false };
            }
            return self.global_pointer(address, true);
        }
        if base == Register::RIP {
            return self.global_pointer(insn.ip_rel_memory_address(), false);
        }
        if base == Register::None {
            if self.symbols.is_per_cpu_offset(disp) {
                return Val::PcpuBase { remote: true };
            }
            if insn.memory_index() == Register::None {
                return self.global_pointer(disp, false);
            }
            return Val::Unknown(Untyped::Indirect);
        }
        if Self::stack_base(base, state) {
            return self
                .stack_slot(insn, state)
                .and_then(|at| slot(state, at))
                .unwrap_or(Val::Unknown(Untyped::Indirect));
        }
        match self.effective(insn, state) {
            Ok((ty, _, offset, _, _, indexed)) => {
                if offset < 0 || indexed && !self.types().is_aggregate(ty) {
                    return Val::Unknown(Untyped::Indirect);
                }
                let span = Span {
                    offset: offset as u64,
                    size: 8,
                    mask: None,
                };
                self.pointer_to(self.unit.types.held_span(ty, span).leaf)
            }
            Err(_) => Val::Unknown(Untyped::Indirect),
        }
    }

    /// A pointer of type `leaf` (a member's, a variable's) as a register value.
    fn pointer_to(&self, leaf: u32) -> Val<'d> {
        if leaf == NONE {
            return Val::Unknown(Untyped::Indirect);
        }
        match self.types().pointee(leaf) {
            Some(ty) => Val::Ptr {
                ty,
                named: self.named(leaf),
                bias: 0,
                percpu: NONE,
                remote: false,
                varying: false,
            },
            None => Val::Unknown(Untyped::Indirect),
        }
    }

    /// The type of the variable at `address` (global or per-CPU), and the offset into it.
    fn variable(&self, address: u64, percpu: bool) -> Option<(u32, u32, u64)> {
        let hit = self.symbols.data(address, percpu)?;
        let start = address - hit.offset;
        let ty = self
            .unit
            .statics
            .binary_search_by_key(&start, |s| s.0)
            .ok()
            .map(|i| self.unit.statics[i].1)
            .or_else(|| self.unit.globals.get(hit.name).copied())?;
        Some((hit.symbol, ty, hit.offset))
    }

    /// A pointer loaded from a global or per-CPU variable (its member at the offset).
    fn global_pointer(&self, address: u64, percpu: bool) -> Val<'d> {
        match self.variable(address, percpu) {
            Some((_, ty, offset)) => {
                let (stripped, _) = self.types().strip(ty);
                let held = self.unit.types.held(stripped, offset);
                self.pointer_to(held.leaf)
            }
            None => Val::Unknown(Untyped::Indirect),
        }
    }

    /// The address of data put in a register (`mov $X`, `lea X`): a per-CPU offset,
    /// or a pointer into a typed global.
    fn address(&self, address: u64, rip: bool) -> Val<'d> {
        if !rip && let Some((var, ty, offset)) = self.variable(address, true) {
            return Val::PcpuOff {
                var,
                ty,
                offset: offset as i64,
            };
        }
        if let Some((_, ty, offset)) = self.variable(address, false) {
            let (stripped, named) = self.types().strip(ty);
            return Val::Ptr {
                ty: stripped,
                named,
                bias: offset as i64,
                percpu: NONE,
                remote: false,
                varying: false,
            };
        }
        if rip && let Some((var, ty, offset)) = self.variable(address, true) {
            return Val::PcpuOff {
                var,
                ty,
                offset: offset as i64,
            };
        }
        Val::Unknown(Untyped::Other)
    }

    fn lea(&self, insn: &Instruction, state: &State<'d>) -> Val<'d> {
        let base = insn.memory_base();
        let disp = insn.memory_displacement64() as i64;
        if insn.memory_index() != Register::None {
            return Val::Unknown(Untyped::Other);
        }
        if base == Register::RIP {
            return self.address(insn.ip_rel_memory_address(), true);
        }
        if base == Register::None {
            return self.address(disp as u64, false);
        }
        let Some(r) = reg_index(base) else {
            return Val::Unknown(Untyped::Other);
        };
        offset_by(self, state.regs[r], disp)
    }

    fn arithmetic(&self, insn: &Instruction, state: &State<'d>, d: usize) -> Val<'d> {
        let sub = insn.mnemonic() == Mnemonic::Sub;
        let cur = state.regs[d];
        match insn.op1_kind() {
            k if is_immediate(k) => {
                let imm = insn.immediate(1) as i64;
                let delta = if sub { imm.wrapping_neg() } else { imm };
                offset_by(self, cur, delta)
            }
            OpKind::Register if !sub => {
                let Some(s) = reg_index(insn.op1_register()) else {
                    return Val::Unknown(Untyped::Other);
                };
                match (cur, state.regs[s]) {
                    // A pointer plus a number: an element somewhere in an array of it.
                    (Val::Ptr { .. }, Val::Unknown(_)) => vary(cur),
                    (Val::Unknown(_), other @ Val::Ptr { .. }) => vary(other),
                    (a, b) => combine(self, a, b),
                }
            }
            OpKind::Memory if !sub => {
                let base = insn.memory_base();
                let gs = insn.memory_segment() == Register::GS;
                let address = if base == Register::RIP {
                    insn.ip_rel_memory_address()
                } else if base == Register::None {
                    insn.memory_displacement64()
                } else {
                    return Val::Unknown(Untyped::Other);
                };
                let other = if gs && self.symbols.is_this_cpu_off(address) {
                    Val::PcpuBase { remote: false }
                } else if !gs && self.symbols.is_per_cpu_offset(address) {
                    Val::PcpuBase { remote: true }
                } else {
                    return Val::Unknown(Untyped::Other);
                };
                combine(self, cur, other)
            }
            _ => Val::Unknown(Untyped::Other),
        }
    }
}

/// What a loop's body changes: the registers it writes (bit per register), the stack
/// slots it stores to, and whether it moves the stack pointer.
struct Kills {
    regs: u16,
    slots: Vec<i64>,
    rsp: bool,
}

/// The state at a loop head: what enters it (falling through, forward branches), less
/// what the loop's body changes before it jumps back.
fn loop_head<'d>(state: &mut State<'d>, live: bool, incoming: Option<State<'d>>, kills: &Kills) {
    match (live, incoming) {
        (true, Some(p)) => state.meet(&p),
        (true, None) => {}
        (false, Some(p)) => *state = p,
        (false, None) => {
            *state = State::unknown(Untyped::Join);
            state.rsp = None;
        }
    }
    for (r, v) in state.regs.iter_mut().enumerate() {
        if kills.regs & (1 << r) != 0 {
            *v = Val::Unknown(Untyped::Join);
        }
    }
    if kills.rsp {
        state.rsp = None;
        state.slots.clear();
    } else {
        state
            .slots
            .retain(|s| !kills.slots.iter().any(|&k| k + 8 > s.0 && k < s.0 + 8));
    }
}

/// The state at an instruction: what falls through from the one before (`live`), met
/// with what forward branches bring (`incoming`) at a branch target.
fn join<'d>(state: &mut State<'d>, live: bool, target: bool, incoming: Option<State<'d>>) {
    match (live, incoming) {
        (true, Some(p)) => state.meet(&p),
        (true, None) => {}
        (false, Some(p)) => *state = p,
        (false, None) => {
            *state = State::unknown(Untyped::Join);
            if !target {
                state.rsp = None;
            }
        }
    }
}

/// `val` moved by an amount not known.
fn vary(val: Val<'_>) -> Val<'_> {
    let mut out = val;
    if let Val::Ptr { varying, .. } = &mut out {
        *varying = true;
    }
    out
}

/// `val` moved by `delta` bytes.
fn offset_by<'d>(scan: &Scan<'_, 'd>, val: Val<'d>, delta: i64) -> Val<'d> {
    match val {
        Val::Ptr { bias, .. } => {
            let mut moved = val;
            if let Val::Ptr { bias: b, .. } = &mut moved {
                *b = bias.wrapping_add(delta);
            }
            moved
        }
        Val::PcpuOff { var, ty, offset } => Val::PcpuOff {
            var,
            ty,
            offset: offset.wrapping_add(delta),
        },
        Val::PcpuBase { remote } => {
            // `lea X(%base)` / `add $X,%base`: the per-CPU object at offset X.
            match scan.variable(delta as u64, true) {
                Some((var, ty, offset)) => percpu_pointer(scan, var, ty, offset as i64, remote),
                None => Val::Unknown(Untyped::Other),
            }
        }
        Val::Unknown(_) => Val::Unknown(Untyped::Other),
    }
}

/// The sum of two register values: a per-CPU offset and a CPU's base.
fn combine<'d>(scan: &Scan<'_, 'd>, a: Val<'d>, b: Val<'d>) -> Val<'d> {
    match (a, b) {
        (Val::PcpuOff { var, ty, offset }, Val::PcpuBase { remote })
        | (Val::PcpuBase { remote }, Val::PcpuOff { var, ty, offset }) => {
            percpu_pointer(scan, var, ty, offset, remote)
        }
        _ => Val::Unknown(Untyped::Other),
    }
}

fn percpu_pointer<'d>(
    scan: &Scan<'_, 'd>,
    var: u32,
    ty: u32,
    offset: i64,
    remote: bool,
) -> Val<'d> {
    let (stripped, named) = scan.types().strip(ty);
    if stripped == NONE {
        return Val::Unknown(Untyped::Other);
    }
    Val::Ptr {
        ty: stripped,
        named,
        bias: offset,
        percpu: var,
        remote,
        varying: false,
    }
}

fn slot<'d>(state: &State<'d>, at: i64) -> Option<Val<'d>> {
    state.slots.iter().find(|s| s.0 == at).map(|s| s.1)
}

fn set_slot<'d>(state: &mut State<'d>, at: i64, val: Val<'d>) {
    state.slots.retain(|s| s.0 + 8 <= at || s.0 >= at + 8);
    if !matches!(val, Val::Unknown(_)) {
        state.slots.push((at, val));
    }
}

/// A 64-bit general register's index in iced-x86's order (RAX = 0 ... R15 = 15).
fn reg_index(r: Register) -> Option<usize> {
    let full = r.full_register();
    if !full.is_gpr64() {
        return None;
    }
    let i = full as usize - Register::RAX as usize;
    (i < REGS).then_some(i)
}

fn is_immediate(kind: OpKind) -> bool {
    matches!(
        kind,
        OpKind::Immediate8to64
            | OpKind::Immediate32to64
            | OpKind::Immediate64
            | OpKind::Immediate32
            | OpKind::Immediate8
    )
}

/// The bits an immediate operand selects in the memory operand (bit 0 its lowest):
/// `test`, `or`, `xor`, `bts`... name theirs, `and` the ones it clears, `bt*` one bit.
fn mask_of(insn: &Instruction) -> Option<u64> {
    if insn.op0_kind() != OpKind::Memory || !is_immediate(insn.op1_kind()) {
        return None;
    }
    let bits = insn.memory_size().size() * 8;
    let width = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let imm = insn.immediate(1);
    let mask = match insn.mnemonic() {
        Mnemonic::Test | Mnemonic::Or | Mnemonic::Xor => imm,
        Mnemonic::And => !imm,
        Mnemonic::Bt | Mnemonic::Bts | Mnemonic::Btr | Mnemonic::Btc => {
            1u64.checked_shl(imm as u32)?
        }
        _ => return None,
    } & width;
    (mask != 0).then_some(mask)
}

/// Instructions whose memory operand is not accessed.
fn is_hint(m: Mnemonic) -> bool {
    matches!(
        m,
        Mnemonic::Nop
            | Mnemonic::Prefetchnta
            | Mnemonic::Prefetcht0
            | Mnemonic::Prefetcht1
            | Mnemonic::Prefetcht2
            | Mnemonic::Prefetchw
            | Mnemonic::Clflush
            | Mnemonic::Clflushopt
    )
}

/// A member path with every array index replaced by `*` (a variable index).
fn any_element(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut inside = false;
    for c in path.chars() {
        match c {
            '[' => {
                inside = true;
                out.push_str("[*");
            }
            ']' => {
                inside = false;
                out.push(']');
            }
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}
