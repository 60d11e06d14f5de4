//! Turns one unit's DIE table into model values: type names as pahole spells them,
//! type sizes and alignments, and struct/union layouts with members laid inline.

use std::cell::{Cell, OnceCell, RefCell};
use std::hash::Hasher;
use std::sync::Arc;

use gimli::constants as dw;
use rustc_hash::FxHasher;

use super::dies::{Die, Name, UnitDies};
use crate::layout::holes;
use crate::model::{AggregateKind, CType, Member, StructLayout, TypeGaps, saturate_u32};

/// Deepest type chain followed before giving up (guards against malformed cycles).
const MAX_DEPTH: usize = 48;

/// `sizes` sentinels: not computed yet, and computed as "no size".
const SIZE_UNKNOWN: u64 = u64::MAX;
const SIZE_NONE: u64 = u64::MAX - 1;

/// Function-type parameters spelled per table at most (a whole vmlinux's BTF, one
/// table, needs under a million).
const SPELL_BUDGET: u64 = 1_000_000;
/// Members of one struct laid out with their anonymous members expanded: the kernels'
/// largest expands to under 300 (`show --struct '*'`: 243 on 6.1.176, 276 on 7.2.13).
/// Past it every direct member is still listed, and anonymous ones are left
/// unexpanded (`struct {...}`), so a forged table of anonymous types nested many times
/// over costs at most this much per struct.
const MEMBER_BUDGET: u64 = 4096;

/// Lazily computed facts about the types of one unit.
pub(crate) struct TypeTable<'u, 'd> {
    pub dies: &'u UnitDies<'d>,
    /// Memoized per entry: size, natural alignment, hash of the type name, and (for
    /// structs) the layout fingerprint.
    /// (`Cell`s with sentinels rather than `OnceCell`s: a table has an entry per DIE,
    /// millions per vmlinux, and these are allocated and cleared for every unit.)
    sizes: Vec<Cell<u64>>,
    aligns: Vec<Cell<u64>>,
    name_hashes: Vec<Cell<u64>>,
    /// `name_hashes` with names by text, for the few layouts that get built.
    text_hashes: OnceCell<Vec<Cell<u64>>>,
    fingerprints: Vec<Cell<u64>>,
    /// `fingerprints` with names by text, for the few layouts that get built (memoized
    /// too: anonymous structs declared `struct { ... } x, y;` at each level nest 2^n
    /// copies of one entry).
    content_fingerprints: OnceCell<Vec<Cell<u64>>>,
    /// Build what only pahole's listing needs (its spellings, members' struct
    /// padding, packed inference); a diff skips it.
    pub(super) listing: bool,
    /// Per entry: its `CType`, pahole's natural alignment, a struct's gaps.
    pub(super) ctypes: Vec<OnceCell<Arc<CType>>>,
    nat_aligns: Vec<OnceCell<u64>>,
    gaps: Vec<OnceCell<TypeGaps>>,
    /// Structs whose gaps are being computed (a malformed table can nest a struct in
    /// itself).
    gaps_busy: RefCell<Vec<usize>>,
    /// Function-type parameters left to spell: a malformed table (BTF is a flat graph
    /// anyone can write) can make spelling exponential; past this, `?`.
    pub(super) spell_budget: Cell<u64>,
    /// Members left to lay out in the struct being built (nested ones included).
    member_budget: Cell<u64>,
    /// The anonymous aggregates being expanded (by entry address): one that holds
    /// itself, which C cannot write, is not expanded again.
    expanding: RefCell<Vec<usize>>,
    address_size: u64,
    little_endian: bool,
    /// File names by `DW_AT_decl_file` index.
    files: &'u dyn Fn(u64) -> Option<String>,
}

impl<'u, 'd> TypeTable<'u, 'd> {
    pub fn new(
        dies: &'u UnitDies<'d>,
        address_size: u64,
        little_endian: bool,
        files: &'u dyn Fn(u64) -> Option<String>,
        listing: bool,
    ) -> Self {
        TypeTable {
            dies,
            listing,
            sizes: vec![Cell::new(SIZE_UNKNOWN); dies.dies.len()],
            aligns: vec![Cell::new(0); dies.dies.len()],
            name_hashes: vec![Cell::new(0); dies.dies.len()],
            text_hashes: OnceCell::new(),
            fingerprints: vec![Cell::new(0); dies.dies.len()],
            content_fingerprints: OnceCell::new(),
            ctypes: (0..dies.dies.len()).map(|_| OnceCell::new()).collect(),
            // Only the listing asks for these: no per-entry cells for a diff.
            nat_aligns: (0..if listing { dies.dies.len() } else { 0 })
                .map(|_| OnceCell::new())
                .collect(),
            gaps: (0..if listing { dies.dies.len() } else { 0 })
                .map(|_| OnceCell::new())
                .collect(),
            gaps_busy: RefCell::new(Vec::new()),
            spell_budget: Cell::new(SPELL_BUDGET),
            member_budget: Cell::new(MEMBER_BUDGET),
            expanding: RefCell::new(Vec::new()),
            address_size,
            little_endian,
            files,
        }
    }

    /// Name of entry `index` of the unit's file table.
    pub fn file(&self, index: u64) -> Option<String> {
        (self.files)(index)
    }

    /// The entry at index `i` (what `Die::ty` holds).
    fn die(&self, i: usize) -> Option<(usize, &Die<'d>)> {
        Some((i, self.dies.dies.get(i)?))
    }

    /// A hash standing for the C spelling of the type at `index` (what `CType` would
    /// print): built from the tokens the spelling is made of, memoized per entry, so no
    /// text is formatted and a type shared by many members is hashed once.
    /// Names enter by string offset when `by_offset` (see `fingerprint`), by text
    /// otherwise; each way has its own memo.
    fn spell_hash(&self, index: usize, depth: usize, by_offset: bool) -> u64 {
        let memo = if by_offset {
            &self.name_hashes
        } else {
            self.text_hashes
                .get_or_init(|| vec![Cell::new(0); self.dies.dies.len()])
        };
        let cached = memo[index].get();
        if cached != 0 {
            return cached;
        }
        let die = &self.dies.dies[index];
        let mut h = FxHasher::default();
        let named = |h: &mut FxHasher, keyword: u8| {
            h.write_u8(keyword);
            match (die.name, by_offset) {
                (Name::Str(o), true) => h.write_u64(u64::from(o) | 1 << 40),
                (Name::LineStr(o), true) => h.write_u64(u64::from(o) | 2 << 40),
                _ => match self.dies.strings.bytes(die.name) {
                    Some(n) => h.write(n),
                    None => h.write_u8(0xff),
                },
            }
        };
        match die.tag {
            dw::DW_TAG_structure_type | dw::DW_TAG_class_type => named(&mut h, 1),
            dw::DW_TAG_union_type => named(&mut h, 2),
            dw::DW_TAG_enumeration_type => named(&mut h, 3),
            dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type => {
                h.write_u8(4);
                h.write_u64(self.target_hash(die, depth, by_offset));
            }
            dw::DW_TAG_const_type => {
                h.write_u8(5);
                h.write_u64(self.target_hash(die, depth, by_offset));
            }
            dw::DW_TAG_volatile_type => {
                h.write_u8(6);
                h.write_u64(self.target_hash(die, depth, by_offset));
            }
            dw::DW_TAG_restrict_type => {
                h.write_u8(7);
                h.write_u64(self.target_hash(die, depth, by_offset));
            }
            dw::DW_TAG_atomic_type => {
                h.write_u8(8);
                h.write_u64(self.target_hash(die, depth, by_offset));
            }
            dw::DW_TAG_array_type => {
                h.write_u8(9);
                h.write_u64(self.target_hash(die, depth, by_offset));
                for sub in self.dies.children(die) {
                    h.write_u64(sub.count().map_or(u64::MAX, |n| n));
                }
            }
            dw::DW_TAG_subroutine_type => {
                h.write_u8(10);
                h.write_u64(self.target_hash(die, depth, by_offset));
                for p in self.dies.children(die) {
                    if p.tag == dw::DW_TAG_unspecified_parameters {
                        h.write_u8(11);
                    } else {
                        h.write_u64(self.target_hash(p, depth, by_offset));
                    }
                }
            }
            dw::DW_TAG_unspecified_type if die.name.is_none() => h.write_u8(0),
            _ if die.name.is_none() => h.write_u8(12),
            _ => named(&mut h, 13),
        }
        // 0 marks "not computed".
        let v = h.finish().max(1);
        memo[index].set(v);
        v
    }

    /// `spell_hash` of the type `die` points at; `void` (0) when none.
    fn target_hash(&self, die: &Die<'d>, depth: usize, by_offset: bool) -> u64 {
        if depth > MAX_DEPTH {
            return 2;
        }
        match die.ty().filter(|&i| i < self.dies.dies.len()) {
            Some(i) => self.spell_hash(i, depth + 1, by_offset),
            None => 0,
        }
    }

    /// Follows typedefs and qualifiers to the type that has the storage.
    pub fn strip(&self, offset: Option<usize>) -> Option<&Die<'d>> {
        self.strip_index(offset).map(|(_, d)| d)
    }

    /// What a variable of type `ty` holds: the type with typedefs and qualifiers
    /// stripped, through up to 8 levels of arrays to their element; and whether
    /// there was an array.
    pub fn element_of(&self, ty: Option<usize>) -> (Option<&Die<'d>>, bool) {
        let mut is_array = false;
        let mut target = self.strip(ty);
        for _ in 0..8 {
            match target {
                Some(t) if t.tag == dw::DW_TAG_array_type => {
                    is_array = true;
                    target = self.strip(t.ty());
                }
                _ => break,
            }
        }
        (target, is_array)
    }

    /// `strip`, with the index of the entry found.
    fn strip_index(&self, mut offset: Option<usize>) -> Option<(usize, &Die<'d>)> {
        for _ in 0..MAX_DEPTH {
            let (i, die) = self.die(offset?)?;
            match die.tag {
                dw::DW_TAG_typedef
                | dw::DW_TAG_const_type
                | dw::DW_TAG_volatile_type
                | dw::DW_TAG_restrict_type
                | dw::DW_TAG_atomic_type => offset = die.ty(),
                _ => return Some((i, die)),
            }
        }
        None
    }

    /// Byte size of a type; `None` when it has none (void, incomplete, flexible array).
    pub fn size_of(&self, offset: Option<usize>) -> Option<u64> {
        self.size_at(offset, 0)
    }

    fn size_at(&self, offset: Option<usize>, depth: usize) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (i, die) = self.die(offset?)?;
        match self.sizes[i].get() {
            SIZE_UNKNOWN => {}
            SIZE_NONE => return None,
            v => return Some(v),
        }
        let v = self.compute_size(die, depth);
        match v {
            None => self.sizes[i].set(SIZE_NONE),
            // A size colliding with a sentinel (only a malformed table saturates) is
            // recomputed each time instead.
            Some(s) if s < SIZE_NONE => self.sizes[i].set(s),
            Some(_) => {}
        }
        v
    }

    fn compute_size(&self, die: &Die<'d>, depth: usize) -> Option<u64> {
        if let Some(s) = die.byte_size() {
            return Some(s);
        }
        match die.tag {
            dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type => Some(self.address_size),
            dw::DW_TAG_array_type => {
                let elem = self.size_at(die.ty(), depth + 1)?;
                let mut n = 1u64;
                for sub in self.dies.children(die) {
                    n = n.saturating_mul(sub.count()?);
                }
                Some(elem.saturating_mul(n))
            }
            dw::DW_TAG_typedef
            | dw::DW_TAG_const_type
            | dw::DW_TAG_volatile_type
            | dw::DW_TAG_restrict_type
            | dw::DW_TAG_atomic_type => self.size_at(die.ty(), depth + 1),
            _ => None,
        }
    }

    /// Natural alignment of a type in bytes (what the compiler aligns a member of it to).
    pub fn align_of(&self, offset: Option<usize>) -> u64 {
        self.align_at(offset, 0)
    }

    fn align_at(&self, offset: Option<usize>, depth: usize) -> u64 {
        let Some((i, die)) = offset.and_then(|o| self.die(o)) else {
            return 1;
        };
        if depth > MAX_DEPTH {
            return 1;
        }
        let cached = self.aligns[i].get();
        if cached != 0 {
            return cached;
        }
        let v = self.compute_align(die, depth);
        self.aligns[i].set(v);
        v
    }

    fn compute_align(&self, die: &Die<'d>, depth: usize) -> u64 {
        if let Some(a) = die.alignment() {
            return a;
        }
        match die.tag {
            dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type => self
                .dies
                .children(die)
                .map(|m| {
                    m.alignment()
                        .unwrap_or(1)
                        .max(self.align_at(m.ty(), depth + 1))
                })
                .max()
                .unwrap_or(1),
            dw::DW_TAG_array_type
            | dw::DW_TAG_typedef
            | dw::DW_TAG_const_type
            | dw::DW_TAG_volatile_type
            | dw::DW_TAG_restrict_type
            | dw::DW_TAG_atomic_type => self.align_at(die.ty(), depth + 1),
            _ => natural_align(die.byte_size().unwrap_or(self.address_size)),
        }
    }

    fn name_hash(&self, offset: Option<usize>, by_offset: bool) -> u64 {
        match offset.filter(|&i| i < self.dies.dies.len()) {
            Some(i) => self.spell_hash(i, 0, by_offset),
            None => 0,
        }
    }

    /// A hash of everything `layout` would put in the struct at `index` (except its
    /// declaring file): equal layouts have equal fingerprints, so duplicates across
    /// units are recognised without building them. Member names enter by where they
    /// are (their offset in `.debug_str`), not by their text: reading millions of names
    /// scattered over the string section was a third of fingerprinting. A linker that
    /// merges strings gives one text one offset; where one does not, equal layouts get
    /// different fingerprints here and `content_fingerprint` merges them afterwards.
    pub fn fingerprint(&self, index: usize) -> u64 {
        self.fingerprint_at(index, 0, true)
    }

    /// `fingerprint` with member names hashed by their text: equal exactly when the
    /// layouts are equal. Computed for the layouts that get built, not for every copy.
    pub fn content_fingerprint(&self, index: usize) -> u64 {
        self.fingerprint_at(index, 0, false)
    }

    fn fingerprint_at(&self, index: usize, depth: usize, by_offset: bool) -> u64 {
        let memo = if by_offset {
            &self.fingerprints
        } else {
            self.content_fingerprints
                .get_or_init(|| vec![Cell::new(0); self.dies.dies.len()])
        };
        let cached = memo[index].get();
        if cached != 0 {
            return cached;
        }
        let die = &self.dies.dies[index];
        let mut h = FxHasher::default();
        // Absent values hash as all ones (only a malformed table has that value too).
        let opt = |v: Option<u64>| v.unwrap_or(u64::MAX);
        let name = |h: &mut FxHasher, n| match (n, by_offset) {
            (Name::Str(o), true) => {
                h.write_u8(1);
                h.write_u32(o);
            }
            (Name::LineStr(o), true) => {
                h.write_u8(2);
                h.write_u32(o);
            }
            _ => match self.dies.strings.bytes(n) {
                Some(b) => {
                    h.write_usize(b.len());
                    h.write(b);
                }
                None => h.write_usize(usize::MAX),
            },
        };
        h.write_u16(die.tag.0);
        name(&mut h, die.name);
        h.write_u64(opt(die.byte_size()));
        h.write_u64(opt(die.alignment()));
        for m in self.dies.children(die) {
            if m.tag != dw::DW_TAG_member {
                continue;
            }
            name(&mut h, m.name);
            h.write_u64(opt(m.member_location()));
            h.write_u64(opt(m.byte_size()));
            match m.rare.as_deref() {
                Some(r)
                    if r.data_bit_offset.is_some()
                        || r.bit_offset.is_some()
                        || r.bit_size.is_some()
                        || r.alignment.is_some() =>
                {
                    h.write_u64(opt(r.data_bit_offset));
                    h.write_u64(opt(r.bit_offset));
                    h.write_u64(opt(r.bit_size));
                    h.write_u64(opt(r.alignment));
                }
                _ => h.write_u8(0),
            }
            h.write_u64(self.name_hash(m.ty(), by_offset));
            h.write_u64(opt(self.size_of(m.ty())));
            h.write_u64(self.align_of(m.ty()));
            if depth < MAX_DEPTH
                && let Some((ti, t)) = self.strip_index(m.ty())
                && t.name.is_none()
                && is_aggregate_tag(t.tag)
            {
                h.write_u64(self.fingerprint_at(ti, depth + 1, by_offset));
            }
        }
        let v = h.finish().max(1);
        memo[index].set(v);
        v
    }

    /// The layout of the struct/union entry at `index`, members offset by `base` bytes.
    pub fn layout(&self, die: &Die<'d>, base: u64, depth: usize) -> StructLayout<'d> {
        self.layout_counted(die, base, depth).0
    }

    /// `layout`, with pahole's count of the layout's holes.
    fn layout_counted(
        &self,
        die: &Die<'d>,
        base: u64,
        depth: usize,
    ) -> (StructLayout<'d>, holes::HoleCounts) {
        if depth == 0 {
            self.member_budget.set(MEMBER_BUDGET);
        }
        let kind = match die.tag {
            dw::DW_TAG_union_type => AggregateKind::Union,
            _ => AggregateKind::Struct,
        };
        let size = die.byte_size().unwrap_or(0);
        let mut members = Vec::new();
        self.expanding.borrow_mut().push(die_key(die));
        for m in self.dies.children(die) {
            if m.tag != dw::DW_TAG_member {
                continue;
            }
            // Bounded work: anonymous members nested into each other (a malformed
            // table) multiply; past the budget no more of them is expanded.
            self.member_budget
                .set(self.member_budget.get().saturating_sub(1));
            members.push(self.member(m, base, depth));
        }
        self.expanding.borrow_mut().pop();
        let explicit_alignment = die.alignment();
        let alignment = explicit_alignment.unwrap_or_else(|| {
            self.dies
                .children(die)
                .map(|m| m.alignment().unwrap_or(1).max(self.align_of(m.ty())))
                .max()
                .unwrap_or(1)
        });
        let mut layout = StructLayout {
            name: self.dies.name(die).unwrap_or(""),
            kind,
            decl_file: die
                .decl_file()
                .and_then(|f| (self.files)(f))
                .map(Into::into),
            size,
            alignment,
            explicit_alignment,
            members,
            holes: Vec::new(),
            bit_holes: Vec::new(),
            padding: 0,
            bit_padding: 0,
            ..StructLayout::default()
        };
        holes::fill(&mut layout, base);
        let counts = holes::attribute(&mut layout, base);
        if self.listing {
            self.infer_packed(&mut layout, base);
        }
        (layout, counts)
    }

    /// Whether pahole would print the layout `__attribute__((__packed__))`: no holes or
    /// padding, and a member off its natural alignment or a size that is not a multiple
    /// of the largest one. Nested anonymous structs are also packed when their union's
    /// size, or their offset in a struct with holes, breaks their natural alignment.
    fn infer_packed(&self, layout: &mut StructLayout<'d>, base: u64) {
        let has_gaps = layout.padding != 0
            || layout.pre_hole != 0
            || layout.members.iter().any(|m| m.hole != 0);
        let size = layout.size;
        let union = layout.kind == AggregateKind::Union;
        for m in &mut layout.members {
            let nat = u64::from(m.natural_alignment.max(1));
            if let Some(n) = m.nested.as_deref_mut()
                && n.kind == AggregateKind::Struct
                && ((union && !size.is_multiple_of(nat))
                    || (!union && has_gaps && !m.offset.saturating_sub(base).is_multiple_of(nat)))
            {
                n.packed = true;
            }
        }
        if union || has_gaps || layout.packed {
            return;
        }
        let mut max = 1;
        for m in &layout.members {
            let nat = u64::from(m.natural_alignment.max(1));
            if nat == 1 {
                continue;
            }
            max = max.max(nat);
            if !m.offset.saturating_sub(base).is_multiple_of(nat) {
                layout.packed = true;
                return;
            }
        }
        layout.packed =
            (max != 1 && layout.explicit_alignment == Some(1)) || !layout.size.is_multiple_of(max);
    }

    /// The entry at `ty` with const/volatile qualifiers (not typedefs) followed.
    fn unqualified(&self, mut ty: Option<usize>) -> Option<&Die<'d>> {
        for _ in 0..MAX_DEPTH {
            let (_, d) = self.die(ty?)?;
            if !matches!(d.tag, dw::DW_TAG_const_type | dw::DW_TAG_volatile_type) {
                return Some(d);
            }
            ty = d.ty();
        }
        None
    }

    /// pahole's natural alignment of a type: pointers the address size, scalars their
    /// size, aggregates their largest member's, arrays their element's; at least 1.
    pub fn natural_align(&self, ty: Option<usize>) -> u64 {
        self.natural_align_at(ty, 0)
    }

    fn natural_align_at(&self, ty: Option<usize>, depth: usize) -> u64 {
        let Some((i, die)) = self.strip_index(ty) else {
            return 1;
        };
        if let Some(&v) = self.nat_aligns[i].get() {
            return v;
        }
        if depth > MAX_DEPTH {
            return 1;
        }
        let v = match die.tag {
            dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type => self.address_size,
            dw::DW_TAG_base_type | dw::DW_TAG_enumeration_type => die.byte_size().unwrap_or(1),
            dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type => self
                .dies
                .children(die)
                .filter(|m| m.tag == dw::DW_TAG_member)
                .map(|m| self.natural_align_at(m.ty(), depth + 1))
                .max()
                .unwrap_or(1),
            dw::DW_TAG_array_type => self.natural_align_at(die.ty(), depth + 1),
            _ => 1,
        }
        .max(1);
        let _ = self.nat_aligns[i].set(v);
        v
    }

    fn listing_gaps(&self, ty: Option<usize>, depth: usize) -> TypeGaps {
        if self.listing {
            self.struct_gaps(ty, depth)
        } else {
            TypeGaps::default()
        }
    }

    fn listing_natural_align(&self, ty: Option<usize>) -> u64 {
        if self.listing {
            self.natural_align(ty)
        } else {
            0
        }
    }

    /// What pahole notes after a member of the type at index `ty` (nothing unless it
    /// is a struct itself, not a typedef or a union).
    fn struct_gaps(&self, ty: Option<usize>, depth: usize) -> TypeGaps {
        let Some((i, die)) = ty.and_then(|o| self.die(o)) else {
            return TypeGaps::default();
        };
        if !matches!(die.tag, dw::DW_TAG_structure_type | dw::DW_TAG_class_type)
            || depth > MAX_DEPTH
            || die.declaration
        {
            return TypeGaps::default();
        }
        if let Some(&v) = self.gaps[i].get() {
            return v;
        }
        let busy = self.gaps_busy.borrow().contains(&i);
        if busy {
            // A struct that holds itself (only a malformed table does): no gaps.
            return TypeGaps::default();
        }
        self.gaps_busy.borrow_mut().push(i);
        // Laid out as a struct of its own (budget, expansions): its gaps do not depend
        // on where it is first met.
        let outer = self.member_budget.replace(MEMBER_BUDGET);
        let outer_expanding = self.expanding.take();
        let (layout, counts) = self.layout_counted(die, 0, depth + 1);
        self.expanding.replace(outer_expanding);
        self.member_budget.set(outer);
        let last = self
            .dies
            .children(die)
            .filter(|m| m.tag == dw::DW_TAG_member)
            .last();
        let flexible = last.and_then(|m| self.die(m.ty()?)).is_some_and(|(_, t)| {
            t.tag == dw::DW_TAG_array_type
                && self.dies.children(t).count() <= 1
                && self
                    .dies
                    .children(t)
                    .next()
                    .and_then(|s| s.count())
                    .unwrap_or(0)
                    == 0
        });
        let embedded_flexible = self
            .dies
            .children(die)
            .filter(|m| m.tag == dw::DW_TAG_member)
            .any(|m| match self.strip_index(m.ty()) {
                Some((j, _)) if j != i => {
                    let g = self.struct_gaps(Some(j), depth + 1);
                    g.flexible || g.embedded_flexible
                }
                _ => false,
            });
        let v = TypeGaps {
            padding: saturate_u32(layout.padding),
            bit_padding: saturate_u32(layout.bit_padding),
            holes: counts.holes,
            bit_holes: counts.bit_holes,
            flexible,
            embedded_flexible,
        };
        self.gaps_busy.borrow_mut().pop();
        let _ = self.gaps[i].set(v);
        v
    }

    fn member(&self, m: &Die<'d>, base: u64, depth: usize) -> Member<'d> {
        let type_size = self.size_of(m.ty());
        let stripped = self.strip(m.ty());
        let location = m.member_location().unwrap_or(0);
        if let Some(bits) = m.bit_size() {
            return self.bitfield(m, base, depth, bits, type_size);
        }
        let nested = self.nested(m, base.saturating_add(location), depth);
        let pointee = self.pointee(m, depth);
        let flexible =
            stripped.is_some_and(|t| t.tag == dw::DW_TAG_array_type) && type_size.unwrap_or(0) == 0;
        let ctype = self.ctype(m.ty());
        Member {
            pointee,
            name: self.dies.name(m),
            offset: base.saturating_add(location),
            size: type_size.unwrap_or(0),
            bit_offset: None,
            bit_size: None,
            flexible,
            nested,
            alignment: m.alignment().map(saturate_u32),
            ctype: ctype.into(),
            type_gaps: self.listing_gaps(m.ty(), depth),
            natural_alignment: saturate_u32(self.listing_natural_align(m.ty())),
            ..Member::default()
        }
    }

    /// Bitfield member `m` of `bits` bits: its storage unit's offset and size, and the
    /// bit offset in that unit (DWARF 4's `DW_AT_bit_offset` counts from the unit's
    /// most significant bit on little-endian targets).
    fn bitfield(
        &self,
        m: &Die<'d>,
        base: u64,
        depth: usize,
        bits: u64,
        type_size: Option<u64>,
    ) -> Member<'d> {
        let location = m.member_location().unwrap_or(0);
        let storage = type_size.or(m.byte_size()).unwrap_or(1).max(1);
        let abs_bit = match (m.data_bit_offset(), m.bit_offset()) {
            (Some(dbo), _) => dbo,
            (None, Some(bo)) => {
                let unit_bytes = m.byte_size().unwrap_or(storage);
                if self.little_endian {
                    location
                        .saturating_add(unit_bytes)
                        .saturating_mul(8)
                        .saturating_sub(bo)
                        .saturating_sub(bits)
                } else {
                    location.saturating_mul(8).saturating_add(bo)
                }
            }
            (None, None) => location.saturating_mul(8),
        };
        // Checked: a forged storage size of 0 or near 2^64 must not divide by zero or
        // overflow.
        let offset = abs_bit
            .checked_div(storage.saturating_mul(8))
            .unwrap_or(0)
            .saturating_mul(storage);
        let ctype = self.ctype(m.ty());
        Member {
            name: self.dies.name(m),
            offset: base.saturating_add(offset),
            size: storage,
            bit_offset: Some(saturate_u32(
                abs_bit.saturating_sub(offset.saturating_mul(8)),
            )),
            bit_size: Some(saturate_u32(bits)),
            flexible: false,
            nested: None,
            alignment: m.alignment().map(saturate_u32),
            ctype: ctype.into(),
            type_gaps: self.listing_gaps(m.ty(), depth),
            natural_alignment: saturate_u32(self.listing_natural_align(m.ty())),
            ..Member::default()
        }
    }

    /// The layout of member `m`'s type laid out inline at `at`, when pahole expands it:
    /// its own type (not a typedef of it) is an anonymous struct or union, named or not,
    /// or an array of one (its element 0), const or not (`const struct {`).
    fn nested(&self, m: &Die<'d>, at: u64, depth: usize) -> Option<Box<StructLayout<'d>>> {
        let mut direct = self.unqualified(m.ty());
        if let Some(a) = direct.filter(|d| d.tag == dw::DW_TAG_array_type) {
            direct = self.unqualified(a.ty());
        }
        match direct {
            Some(t)
                if t.name.is_none()
                    && matches!(
                        t.tag,
                        dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type
                    )
                    && self.may_expand(t, depth) =>
            {
                Some(Box::new(self.layout(t, at, depth + 1)))
            }
            _ => None,
        }
    }

    /// The anonymous struct a pointer member points at, which pahole lists too
    /// (`struct { ... } * parts;`), with offsets inside it; only for the listing.
    fn pointee(&self, m: &Die<'d>, depth: usize) -> Option<Box<StructLayout<'d>>> {
        match self.die(m.ty().unwrap_or(usize::MAX)).map(|(_, d)| d) {
            Some(p) if self.listing && p.tag == dw::DW_TAG_pointer_type => {
                match p.ty().and_then(|o| self.die(o)).map(|(_, d)| d) {
                    Some(t)
                        if t.name.is_none()
                            && is_aggregate_tag(t.tag)
                            && self.may_expand(t, depth) =>
                    {
                        Some(Box::new(self.layout(t, 0, depth + 1)))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether the anonymous aggregate `t`, met at `depth`, is laid out inline: not
    /// past `MAX_DEPTH` or the struct's member budget, and not inside itself.
    fn may_expand(&self, t: &Die<'d>, depth: usize) -> bool {
        depth < MAX_DEPTH
            && self.member_budget.get() > 0
            && !self.expanding.borrow().contains(&die_key(t))
    }
}

/// Identifies an entry of the table (entries do not move while a table lives).
fn die_key(d: &Die<'_>) -> usize {
    std::ptr::from_ref(d) as usize
}

fn is_aggregate_tag(tag: gimli::DwTag) -> bool {
    matches!(
        tag,
        dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type
    )
}

/// Natural alignment of a scalar of `size` bytes: the size rounded down to a power of
/// two, capped at 16.
fn natural_align(size: u64) -> u64 {
    if size == 0 {
        return 1;
    }
    let p = 1u64 << (63 - size.leading_zeros());
    p.min(16)
}
