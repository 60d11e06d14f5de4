//! One compile unit's DWARF read for the typed scan: its types, its functions' code
//! ranges, its variables' types by name and address, and where every pointer-typed
//! parameter or local lives: which register holds it over which addresses, in the
//! subprogram and in every inlined subroutine and lexical block.

use gimli::{AttributeValue, DwTag, Section, constants as dw};
use rustc_hash::FxHashMap;

use super::ctypes::{MemberNode, Name, Node, Types, UNSIZED};
use super::{Dwarf, Reader, Unit};
use crate::model::typed::NONE;

/// A register holding a pointer to a type over `[lo, hi)`: the value is the register
/// plus `bias` (`DW_OP_breg r, k; DW_OP_stack_value` gives `bias` `k`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Fact {
    pub lo: u64,
    pub hi: u64,
    /// The register, numbered as iced-x86's 64-bit registers (`RAX` = 0 ... `R15` = 15).
    pub reg: u8,
    /// The value is the 8 bytes loaded from the register plus this offset (plus `bias`),
    /// not the register.
    pub load: Option<i32>,
    /// Nesting depth of the scope: the innermost scope wins.
    pub depth: u16,
    /// The pointer's type (not stripped).
    pub ty: u32,
    /// What it points to (stripped).
    pub pointee: u32,
    pub bias: i32,
}

/// A function with code: its ranges (the first the entry's, a `.cold` part after).
#[derive(Debug, Clone)]
pub(super) struct Function {
    pub ranges: Vec<(u64, u64)>,
}

/// What one unit gives the scan.
#[derive(Debug, Default)]
pub(super) struct UnitFacts<'d> {
    pub types: Types<'d>,
    pub functions: Vec<Function>,
    /// Sorted by `lo`.
    pub facts: Vec<Fact>,
    /// Variables (declared or defined) by name, with their type.
    pub globals: FxHashMap<&'d str, u32>,
    /// Variables with a fixed address (`DW_OP_addr`), with their type, sorted.
    pub statics: Vec<(u64, u32)>,
}

/// A variable or parameter seen in a scope, resolved once the unit is read.
struct Raw<'d> {
    ty: u32,
    origin: u32,
    location: Option<AttributeValue<Reader<'d>>>,
    scope: usize,
    depth: u16,
}

/// DWARF register numbers (x86-64 psABI) to iced-x86's order (RAX RCX RDX RBX RSP
/// RBP RSI RDI R8..R15).
const DWARF_TO_ICED: [u8; 16] = [0, 2, 1, 3, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15];

/// An open entry: its depth, tag, unit offset, and the scope its children are in
/// (`usize::MAX`: none).
type Open = (isize, DwTag, u32, usize);

/// The state of one unit's walk.
struct Walk<'a, 'd> {
    dwarf: &'a Dwarf<'d>,
    unit: &'a Unit<'d>,
    out: UnitFacts<'d>,
    members: Vec<(u32, MemberNode<'d>)>,
    raws: Vec<Raw<'d>>,
    /// Variables and parameters by unit offset, with their type and origin.
    declared: FxHashMap<u32, (u32, u32)>,
    /// Code ranges of the scopes that have them.
    scopes: Vec<Vec<(u64, u64)>>,
    stack: Vec<Open>,
}

type Entry<'d> = gimli::DebuggingInformationEntry<Reader<'d>>;

/// Reads unit `unit` of `dwarf`.
pub(super) fn read<'d>(dwarf: &Dwarf<'d>, unit: &Unit<'d>) -> gimli::Result<UnitFacts<'d>> {
    let mut walk = Walk {
        dwarf,
        unit,
        out: UnitFacts::default(),
        members: Vec::new(),
        raws: Vec::new(),
        declared: FxHashMap::default(),
        scopes: Vec::new(),
        stack: Vec::new(),
    };
    walk.out.types.strings = (
        dwarf.debug_str.reader().slice(),
        dwarf.debug_line_str.reader().slice(),
    );
    let mut cursor = unit.entries();
    while let Some(entry) = cursor.next_dfs()? {
        walk.entry(entry)?;
    }
    walk.finish()
}

impl<'d> Walk<'_, 'd> {
    fn entry(&mut self, entry: &Entry<'d>) -> gimli::Result<()> {
        let depth = entry.depth();
        while self.stack.last().is_some_and(|s| s.0 >= depth) {
            self.stack.pop();
        }
        let offset = u32::try_from(entry.offset().0).unwrap_or(NONE);
        let tag = entry.tag();
        let parent = self.stack.last().copied();
        let mut scope_here = usize::MAX;
        match tag {
            dw::DW_TAG_member => self.member(entry, parent),
            dw::DW_TAG_subrange_type => self.subrange(entry, parent),
            dw::DW_TAG_subprogram | dw::DW_TAG_inlined_subroutine | dw::DW_TAG_lexical_block => {
                scope_here = self.scope(entry, parent)?;
            }
            dw::DW_TAG_formal_parameter | dw::DW_TAG_variable => {
                self.variable(entry, offset, depth, parent);
            }
            _ => {
                if let Some(node) = type_node(entry) {
                    self.out.types.nodes.insert(offset, node);
                }
            }
        }
        if entry.has_children() {
            let inherited = match scope_here {
                usize::MAX => parent.map_or(usize::MAX, |p| p.3),
                s => s,
            };
            self.stack.push((depth, tag, offset, inherited));
        }
        Ok(())
    }

    fn member(&mut self, entry: &Entry<'d>, parent: Option<Open>) {
        let Some((_, ptag, poff, _)) = parent else {
            return;
        };
        if !matches!(
            ptag,
            dw::DW_TAG_structure_type | dw::DW_TAG_union_type | dw::DW_TAG_class_type
        ) {
            return;
        }
        let location = udata(entry, dw::DW_AT_data_member_location);
        let data_bit = udata(entry, dw::DW_AT_data_bit_offset);
        let at = location.or(data_bit.map(|b| b / 8)).unwrap_or(0);
        let bits = udata(entry, dw::DW_AT_bit_size).and_then(|width| {
            let first = match (data_bit, udata(entry, dw::DW_AT_bit_offset)) {
                (Some(b), _) => b,
                // DWARF 4: bits counted from the storage unit's most significant end.
                (None, Some(from_top)) => {
                    let unit_bits = 8 * udata(entry, dw::DW_AT_byte_size).unwrap_or(0);
                    (8 * at + unit_bits).checked_sub(from_top + width)?
                }
                (None, None) => 8 * at,
            };
            Some((u32::try_from(first).ok()?, u32::try_from(width).ok()?))
        });
        self.members.push((
            poff,
            MemberNode {
                name: name_of(entry),
                offset: u32::try_from(at).unwrap_or(u32::MAX),
                ty: type_ref(entry),
                size: std::cell::Cell::new(UNSIZED),
                bits,
            },
        ));
    }

    /// An array's dimension: the first gives the count, the others multiply `inner`.
    fn subrange(&mut self, entry: &Entry<'d>, parent: Option<Open>) {
        let Some((_, dw::DW_TAG_array_type, poff, _)) = parent else {
            return;
        };
        let count = udata(entry, dw::DW_AT_count)
            .or_else(|| udata(entry, dw::DW_AT_upper_bound).map(|u| u + 1))
            .unwrap_or(0);
        let count = u32::try_from(count).unwrap_or(0);
        if let Some(Node::Array {
            count: c, inner, ..
        }) = self.out.types.nodes.get_mut(&poff)
        {
            if *c == 0 && *inner == 1 {
                *c = count;
            } else {
                *inner = inner.saturating_mul(count.max(1));
            }
        }
    }

    /// A subprogram, inlined subroutine or lexical block: its ranges become a scope
    /// (a subprogram's, a function); returns the scope's index, `usize::MAX` for none.
    fn scope(&mut self, entry: &Entry<'d>, parent: Option<Open>) -> gimli::Result<usize> {
        let ranges = ranges_of(self.dwarf, self.unit, entry)?;
        if ranges.is_empty() {
            // A block without ranges of its own covers its parent's.
            return Ok(match (entry.tag(), parent) {
                (dw::DW_TAG_lexical_block, Some((.., s))) => s,
                _ => usize::MAX,
            });
        }
        if entry.tag() == dw::DW_TAG_subprogram {
            self.out.functions.push(Function {
                ranges: ranges.clone(),
            });
        }
        self.scopes.push(ranges);
        Ok(self.scopes.len() - 1)
    }

    fn variable(&mut self, entry: &Entry<'d>, offset: u32, depth: isize, parent: Option<Open>) {
        let tag = entry.tag();
        let ty = type_ref(entry);
        let origin = match entry
            .attr_value(dw::DW_AT_abstract_origin)
            .or_else(|| entry.attr_value(dw::DW_AT_specification))
        {
            Some(AttributeValue::UnitRef(o)) => u32::try_from(o.0).unwrap_or(NONE),
            _ => NONE,
        };
        self.declared.insert(offset, (ty, origin));
        let location = entry.attr_value(dw::DW_AT_location);
        if tag == dw::DW_TAG_variable
            && let Some(AttributeValue::Exprloc(expr)) = &location
            && let Some(address) = fixed_address(self.dwarf, self.unit, expr)
        {
            let ty = resolve_origin(ty, origin, &self.declared);
            if ty != NONE {
                self.out.statics.push((address, ty));
            }
        }
        if tag == dw::DW_TAG_variable
            && depth == 1
            && ty != NONE
            && let Some(name) = name_text(self.dwarf, self.unit, entry)
        {
            self.out.globals.entry(name).or_insert(ty);
        }
        let scope = parent.map_or(usize::MAX, |p| p.3);
        if scope != usize::MAX && location.is_some() {
            self.raws.push(Raw {
                ty,
                origin,
                location,
                scope,
                depth: u16::try_from(self.stack.len()).unwrap_or(u16::MAX),
            });
        }
    }

    /// Members attached, and every pointer-typed variable's facts.
    fn finish(mut self) -> gimli::Result<UnitFacts<'d>> {
        attach_members(&mut self.out.types, std::mem::take(&mut self.members));
        self.out.statics.sort_unstable();
        for raw in std::mem::take(&mut self.raws) {
            let ty = resolve_origin(raw.ty, raw.origin, &self.declared);
            let Some(pointee) = self.out.types.pointee(ty).filter(|_| ty != NONE) else {
                continue;
            };
            let scope = &self.scopes[raw.scope];
            facts_of(
                self.dwarf,
                self.unit,
                &raw,
                (ty, pointee),
                scope,
                &mut self.out.facts,
            )?;
        }
        self.out
            .facts
            .sort_unstable_by_key(|f| (f.lo, f.hi, f.reg, f.depth));
        Ok(self.out)
    }
}

/// The node of a type entry (not a member or a subrange); `None` for other entries.
fn type_node<'d>(entry: &Entry<'d>) -> Option<Node<'d>> {
    let tag = entry.tag();
    Some(match tag {
        dw::DW_TAG_typedef => Node::Alias {
            target: type_ref(entry),
            name: name_of(entry),
        },
        dw::DW_TAG_const_type
        | dw::DW_TAG_volatile_type
        | dw::DW_TAG_restrict_type
        | dw::DW_TAG_atomic_type => Node::Alias {
            target: type_ref(entry),
            name: Name::None,
        },
        dw::DW_TAG_pointer_type | dw::DW_TAG_reference_type => Node::Pointer(type_ref(entry)),
        dw::DW_TAG_structure_type | dw::DW_TAG_union_type | dw::DW_TAG_class_type => {
            Node::Aggregate {
                name: name_of(entry),
                union: tag == dw::DW_TAG_union_type,
                size: u32::try_from(udata(entry, dw::DW_AT_byte_size).unwrap_or(0))
                    .unwrap_or(u32::MAX),
                first: 0,
                len: 0,
            }
        }
        dw::DW_TAG_array_type => Node::Array {
            elem: type_ref(entry),
            count: 0,
            inner: 1,
        },
        dw::DW_TAG_base_type | dw::DW_TAG_enumeration_type => Node::Base {
            size: u32::try_from(udata(entry, dw::DW_AT_byte_size).unwrap_or(0)).unwrap_or(0),
            name: name_of(entry),
        },
        dw::DW_TAG_subroutine_type | dw::DW_TAG_unspecified_type => Node::Other,
        _ => return None,
    })
}

/// Gives each aggregate its members, in the order DWARF lists them.
fn attach_members<'d>(types: &mut Types<'d>, mut members: Vec<(u32, MemberNode<'d>)>) {
    members.sort_by_key(|m| m.0);
    let mut i = 0;
    while i < members.len() {
        let parent = members[i].0;
        let first = types.members.len();
        while i < members.len() && members[i].0 == parent {
            types.members.push(members[i].1.clone());
            i += 1;
        }
        if let Some(Node::Aggregate { first: f, len, .. }) = types.nodes.get_mut(&parent) {
            *f = u32::try_from(first).unwrap_or(0);
            *len = u32::try_from(types.members.len() - first).unwrap_or(0);
        }
    }
}

/// A variable's type, through up to four `DW_AT_abstract_origin` links.
fn resolve_origin(mut ty: u32, mut origin: u32, declared: &FxHashMap<u32, (u32, u32)>) -> u32 {
    for _ in 0..4 {
        if ty != NONE {
            return ty;
        }
        let Some(&(t, o)) = declared.get(&origin) else {
            return NONE;
        };
        ty = t;
        origin = o;
    }
    ty
}

/// The facts of one variable: each range over which its value is a register (plus a
/// constant).
fn facts_of<'d>(
    dwarf: &Dwarf<'d>,
    unit: &Unit<'d>,
    raw: &Raw<'d>,
    (ty, pointee): (u32, u32),
    scope: &[(u64, u64)],
    out: &mut Vec<Fact>,
) -> gimli::Result<()> {
    let Some(location) = &raw.location else {
        return Ok(());
    };
    let mut push = |lo: u64, hi: u64, expr: gimli::Expression<Reader<'d>>| {
        if let Some((reg, load, bias)) = register_value(unit, expr)
            && lo < hi
        {
            out.push(Fact {
                lo,
                hi,
                reg,
                load,
                depth: raw.depth,
                ty,
                pointee,
                bias,
            });
        }
    };
    match location {
        AttributeValue::Exprloc(expr) => {
            for &(lo, hi) in scope {
                push(lo, hi, *expr);
            }
        }
        other => {
            if let Some(mut list) = dwarf.attr_locations(unit, *other)? {
                while let Some(entry) = list.next()? {
                    push(entry.range.begin, entry.range.end, entry.data);
                }
            }
        }
    }
    Ok(())
}

/// Where a location expression says the value is: a register plus a constant
/// (`DW_OP_regN`; `DW_OP_bregN k; DW_OP_stack_value`), or the 8 bytes loaded from a
/// register plus an offset, plus a constant (`DW_OP_bregN k; DW_OP_deref;
/// DW_OP_const c; DW_OP_minus; DW_OP_stack_value`: `container_of(p->next, ...)`).
/// Returns (register, load offset when loaded, constant).
fn register_value<'d>(
    unit: &Unit<'d>,
    expr: gimli::Expression<Reader<'d>>,
) -> Option<(u8, Option<i32>, i32)> {
    use gimli::Operation as Op;
    let mut ops = expr.operations(unit.encoding());
    let (register, mut value) = match ops.next().ok()?? {
        Op::Register { register } => {
            return match ops.next().ok()? {
                None => Some((*DWARF_TO_ICED.get(usize::from(register.0))?, None, 0)),
                Some(_) => None,
            };
        }
        Op::RegisterOffset {
            register, offset, ..
        } => (register, offset),
        _ => return None,
    };
    let mut load = None;
    let mut constant: Option<i64> = None;
    loop {
        match ops.next().ok()?? {
            Op::Deref {
                size: 8,
                space: false,
                ..
            } if load.is_none() && constant.is_none() => {
                load = Some(i32::try_from(value).ok()?);
                value = 0;
            }
            Op::UnsignedConstant { value: c } => constant = Some(i64::try_from(c).ok()?),
            Op::SignedConstant { value: c } => constant = Some(c),
            Op::Minus => value = value.checked_sub(constant.take()?)?,
            Op::Plus => value = value.checked_add(constant.take()?)?,
            Op::PlusConstant { value: c } => value = value.checked_add(i64::try_from(c).ok()?)?,
            Op::StackValue if constant.is_none() => break,
            _ => return None,
        }
    }
    if ops.next().ok()?.is_some() {
        return None;
    }
    let reg = *DWARF_TO_ICED.get(usize::from(register.0))?;
    Some((reg, load, i32::try_from(value).ok()?))
}

/// A `DW_OP_addr` (or `DW_OP_addrx`) location: a variable with a fixed address.
fn fixed_address<'d>(
    dwarf: &Dwarf<'d>,
    unit: &Unit<'d>,
    expr: &gimli::Expression<Reader<'d>>,
) -> Option<u64> {
    let mut ops = (*expr).operations(unit.encoding());
    let op = ops.next().ok()??;
    if ops.next().ok()?.is_some() {
        return None;
    }
    match op {
        gimli::Operation::Address { address } => Some(address),
        gimli::Operation::AddressIndex { index } => dwarf.address(unit, index).ok(),
        _ => None,
    }
}

fn ranges_of<'d>(
    dwarf: &Dwarf<'d>,
    unit: &Unit<'d>,
    entry: &gimli::DebuggingInformationEntry<Reader<'d>>,
) -> gimli::Result<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    if entry.attr_value(dw::DW_AT_low_pc).is_none() && entry.attr_value(dw::DW_AT_ranges).is_none()
    {
        return Ok(out);
    }
    let mut ranges = dwarf.die_ranges(unit, entry)?;
    while let Some(r) = ranges.next()? {
        if r.begin < r.end {
            out.push((r.begin, r.end));
        }
    }
    Ok(out)
}

fn type_ref(entry: &gimli::DebuggingInformationEntry<Reader<'_>>) -> u32 {
    match entry.attr_value(dw::DW_AT_type) {
        Some(AttributeValue::UnitRef(o)) => u32::try_from(o.0).unwrap_or(NONE),
        _ => NONE,
    }
}

fn udata(entry: &gimli::DebuggingInformationEntry<Reader<'_>>, at: gimli::DwAt) -> Option<u64> {
    entry.attr_value(at)?.udata_value()
}

/// An entry's name, left where it is stored.
fn name_of<'d>(entry: &gimli::DebuggingInformationEntry<Reader<'d>>) -> Name<'d> {
    match entry.attr_value(dw::DW_AT_name) {
        Some(AttributeValue::DebugStrRef(o)) => Name::Str(o.0 as u64),
        Some(AttributeValue::DebugLineStrRef(o)) => Name::LineStr(o.0 as u64),
        Some(AttributeValue::String(s)) => Name::Bytes(s.slice()),
        _ => Name::None,
    }
}

/// An entry's name as text, wherever it is stored.
fn name_text<'d>(
    dwarf: &Dwarf<'d>,
    unit: &Unit<'d>,
    entry: &gimli::DebuggingInformationEntry<Reader<'d>>,
) -> Option<&'d str> {
    let value = entry.attr_value(dw::DW_AT_name)?;
    let bytes = dwarf.attr_string(unit, value).ok()?;
    std::str::from_utf8(bytes.slice()).ok()
}
