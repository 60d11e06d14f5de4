//! Reads one compile unit's DIEs into a compact per-unit table of the entries that
//! describe types and global variables. Attributes of every other entry are skipped
//! without decoding.

use std::marker::PhantomData;

use gimli::{AttributeValue, DwTag, EndianSlice, RunTimeEndian, constants as dw};

use super::tree::Tree;

pub(crate) type Reader<'d> = EndianSlice<'d, RunTimeEndian>;
pub(crate) type Dwarf<'d> = gimli::Dwarf<Reader<'d>>;
pub(crate) type Unit<'d> = gimli::Unit<Reader<'d>>;

/// The attributes of one type-describing entry that layouts need. Kept small (most
/// entries are struct members, millions per vmlinux); rare attributes live in `Rare`.
#[derive(Debug)]
pub(crate) struct Die<'d> {
    /// `DW_AT_name`, resolved only when asked (`UnitDies::name`): most entries are
    /// members whose names are never printed.
    pub name: Name,
    /// `DW_AT_byte_size` and `DW_AT_data_member_location`, `ABSENT` when missing
    /// (read them with `byte_size()` / `member_location()`).
    byte_size: u64,
    member_location: u64,
    pub rare: Option<Box<Rare>>,
    pub offset: u32,
    /// `DW_AT_type`: a unit offset while reading, then the index of the entry in
    /// `UnitDies::dies` once `read_unit` returns; `NONE` when absent or unresolved.
    ty: u32,
    /// Variables: `DW_AT_specification`, resolved like `ty`.
    specification: u32,
    decl_file: u32,
    /// Variables: `DW_AT_decl_line` (a unit's objects of one section are emitted in
    /// an order of their definitions' lines).
    decl_line: u32,
    /// First recorded child (members of a struct/union, subranges of an array,
    /// parameters of a subroutine type) and next recorded sibling; `NONE` if none.
    pub first_child: u32,
    pub next_sibling: u32,
    pub tag: DwTag,
    pub declaration: bool,
    /// A variable that is a direct child of the compile unit.
    pub top_level: bool,
    /// Names live in the sections the table was read from.
    data: PhantomData<&'d [u8]>,
}

/// Where a name is: inline in `.debug_info`, or in a string section, by offset (eight
/// bytes, not a slice: there is a `Die` per member, millions of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Name {
    None,
    Inline(u32),
    Str(u32),
    LineStr(u32),
}

impl Name {
    pub fn is_none(&self) -> bool {
        matches!(self, Name::None)
    }
}

/// The string sections names point into.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strings<'d> {
    /// Inline (`DW_FORM_string`) names point into this one.
    pub debug_info: &'d [u8],
    pub debug_str: &'d [u8],
    pub debug_line_str: &'d [u8],
}

impl<'d> Strings<'d> {
    /// The bytes of a name, without its terminating NUL.
    pub fn bytes(&self, name: Name) -> Option<&'d [u8]> {
        let (data, at) = match name {
            Name::None => return None,
            Name::Inline(o) => (self.debug_info, o),
            Name::Str(o) => (self.debug_str, o),
            Name::LineStr(o) => (self.debug_line_str, o),
        };
        let rest = data.get(at as usize..)?;
        // Most names are short: a plain scan of the first bytes beats memchr's setup.
        let head = &rest[..rest.len().min(24)];
        if let Some(n) = head.iter().position(|&b| b == 0) {
            return Some(&rest[..n]);
        }
        Some(&rest[..memchr::memchr(0, rest)?])
    }

    /// The name as text; `None` when absent or not UTF-8.
    pub fn text(&self, name: Name) -> Option<&'d str> {
        std::str::from_utf8(self.bytes(name)?).ok()
    }
}

/// Attributes few entries have: bitfields, subranges, variables, explicit alignment.
#[derive(Debug, Default)]
pub(crate) struct Rare {
    pub alignment: Option<u64>,
    pub data_bit_offset: Option<u64>,
    /// DWARF 2-4 `DW_AT_bit_offset` (counted from the storage unit's most significant bit).
    pub bit_offset: Option<u64>,
    pub bit_size: Option<u64>,
    /// Subranges: element count (`DW_AT_count`, or `DW_AT_upper_bound` + 1).
    pub count: Option<u64>,
    /// Enumerators: `DW_AT_const_value`.
    pub const_value: Option<i64>,
    /// Variables: the address from a `DW_OP_addr`/`DW_OP_addrx` location.
    pub address: Option<u64>,
}

fn some(v: u32) -> Option<usize> {
    (v != NONE).then_some(v as usize)
}

/// `Die::byte_size` / `member_location` when absent (a malformed table's all-ones value
/// reads as absent too).
const ABSENT: u64 = u64::MAX;

fn present(v: u64) -> Option<u64> {
    (v != ABSENT).then_some(v)
}

impl Die<'_> {
    pub fn byte_size(&self) -> Option<u64> {
        present(self.byte_size)
    }
    pub fn member_location(&self) -> Option<u64> {
        present(self.member_location)
    }
    pub(crate) fn set_byte_size(&mut self, v: Option<u64>) {
        self.byte_size = v.unwrap_or(ABSENT);
    }
    pub(crate) fn set_member_location(&mut self, v: Option<u64>) {
        self.member_location = v.unwrap_or(ABSENT);
    }
    pub fn ty(&self) -> Option<usize> {
        some(self.ty)
    }
    pub fn specification(&self) -> Option<usize> {
        some(self.specification)
    }
    pub fn decl_file(&self) -> Option<u64> {
        some(self.decl_file).map(|f| f as u64)
    }
    pub fn decl_line(&self) -> Option<u32> {
        (self.decl_line != NONE).then_some(self.decl_line)
    }
    pub fn alignment(&self) -> Option<u64> {
        self.rare.as_ref()?.alignment
    }
    pub fn data_bit_offset(&self) -> Option<u64> {
        self.rare.as_ref()?.data_bit_offset
    }
    pub fn bit_offset(&self) -> Option<u64> {
        self.rare.as_ref()?.bit_offset
    }
    pub fn bit_size(&self) -> Option<u64> {
        self.rare.as_ref()?.bit_size
    }
    pub fn count(&self) -> Option<u64> {
        self.rare.as_ref()?.count
    }
    pub fn const_value(&self) -> Option<i64> {
        self.rare.as_ref()?.const_value
    }
    pub fn address(&self) -> Option<u64> {
        self.rare.as_ref()?.address
    }
    pub(crate) fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }
    /// Sets `DW_AT_type` to an entry index (`NONE` for none); for tables built from
    /// another format (BTF).
    pub(crate) fn set_ty(&mut self, index: u32) {
        self.ty = index;
    }
    /// `DW_AT_type` as stored (`NONE` when absent).
    pub(crate) fn raw_ty(&self) -> u32 {
        self.ty
    }
    /// Maps `DW_AT_type` and `DW_AT_specification` (unit offsets as read) to entry
    /// indices; for tables built from part of a unit (`lookup`).
    pub(crate) fn map_refs(&mut self, index: impl Fn(u32) -> u32) {
        self.ty = index(self.ty);
        self.specification = index(self.specification);
    }
}

impl Default for Die<'_> {
    fn default() -> Self {
        Die {
            name: Name::None,
            byte_size: ABSENT,
            member_location: ABSENT,
            rare: None,
            offset: 0,
            ty: NONE,
            specification: NONE,
            decl_file: NONE,
            decl_line: NONE,
            first_child: NONE,
            next_sibling: NONE,
            tag: dw::DW_TAG_null,
            declaration: false,
            top_level: false,
            data: PhantomData,
        }
    }
}

/// No entry (end of a child list).
pub(crate) const NONE: u32 = u32::MAX;

/// All type and variable entries of one unit, in offset order.
pub(crate) struct UnitDies<'d> {
    pub dies: Vec<Die<'d>>,
    pub strings: Strings<'d>,
}

impl<'d> UnitDies<'d> {
    /// Index of the entry at a unit offset.
    pub fn index_of(&self, offset: u32) -> Option<usize> {
        self.dies.binary_search_by_key(&offset, |d| d.offset).ok()
    }

    /// The name of an entry.
    pub fn name(&self, die: &Die<'d>) -> Option<&'d str> {
        self.strings.text(die.name)
    }

    /// The entry at an index (as `ty` holds).
    pub fn get(&self, index: usize) -> Option<&Die<'d>> {
        self.dies.get(index)
    }

    /// The recorded children of `die`, in order.
    pub fn children<'a>(&'a self, die: &Die<'d>) -> impl Iterator<Item = &'a Die<'d>> + 'a {
        let mut next = die.first_child;
        std::iter::from_fn(move || {
            let d = self.dies.get(next as usize)?;
            next = d.next_sibling;
            Some(d)
        })
    }
}

pub(crate) fn is_recorded(tag: DwTag, parent: Option<DwTag>, enumerators: bool) -> bool {
    match tag {
        dw::DW_TAG_base_type
        | dw::DW_TAG_unspecified_type
        | dw::DW_TAG_pointer_type
        | dw::DW_TAG_reference_type
        | dw::DW_TAG_rvalue_reference_type
        | dw::DW_TAG_const_type
        | dw::DW_TAG_volatile_type
        | dw::DW_TAG_restrict_type
        | dw::DW_TAG_atomic_type
        | dw::DW_TAG_typedef
        | dw::DW_TAG_structure_type
        | dw::DW_TAG_class_type
        | dw::DW_TAG_union_type
        | dw::DW_TAG_enumeration_type
        | dw::DW_TAG_array_type
        | dw::DW_TAG_subroutine_type
        | dw::DW_TAG_ptr_to_member_type
        | dw::DW_TAG_variable => true,
        dw::DW_TAG_member => matches!(
            parent,
            Some(dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type)
        ),
        dw::DW_TAG_subrange_type => parent == Some(dw::DW_TAG_array_type),
        // Only pahole's listing prints enumerators (of anonymous enum members).
        dw::DW_TAG_enumerator => enumerators && parent == Some(dw::DW_TAG_enumeration_type),
        dw::DW_TAG_formal_parameter | dw::DW_TAG_unspecified_parameters => {
            parent == Some(dw::DW_TAG_subroutine_type)
        }
        _ => false,
    }
}

fn unit_ref(value: &AttributeValue<Reader<'_>>) -> u32 {
    match value {
        AttributeValue::UnitRef(off) => u32::try_from(off.0).unwrap_or(NONE),
        _ => NONE,
    }
}

/// Walks every entry of `unit`, recording the ones that describe types and variables
/// (and enumerators when `enumerators`).
pub(crate) fn read_unit<'d>(
    dwarf: &Dwarf<'d>,
    unit: &Unit<'d>,
    strings: Strings<'d>,
    enumerators: bool,
) -> gimli::Result<UnitDies<'d>> {
    let mut tree = Tree::<Option<u32>>::whole(unit)?;
    // At most one recorded entry per ~24 bytes of a vmlinux unit (7.1 M DIEs in 163 MB
    // of .debug_info in Debian 6.1, not all recorded): reserving that up front
    // spares the doublings (each a copy and fresh pages).
    let estimate = (unit.header.unit_length() / 24).min(1 << 20);
    let mut dies: Vec<Die<'d>> = Vec::with_capacity(estimate);
    // The offsets of `dies` (increasing), for resolving references.
    let mut offsets: Vec<u32> = Vec::with_capacity(estimate);
    // Last recorded child of each recorded parent, by parent index.
    let mut last_child: Vec<(u32, u32)> = Vec::new();
    while let Some(entry) = tree.next()? {
        let tag = entry.tag();
        let parent_tag = entry.parent_tag();
        let recorded = is_recorded(tag, parent_tag, enumerators)
            && (tag != dw::DW_TAG_variable || parent_tag == Some(dw::DW_TAG_compile_unit));
        if !recorded {
            tree.skip(&entry)?;
            tree.open(&entry, None);
            continue;
        }
        let mut die = Die {
            offset: u32::try_from(entry.offset).unwrap_or(NONE),
            tag,
            top_level: tag == dw::DW_TAG_variable,
            ..Die::default()
        };
        read_wanted(dwarf, unit, &strings, tree.raw(), entry.abbrev, &mut die)?;
        // Entries are linked by u32 index, `NONE` reserved: a unit of more than
        // 4 G recorded entries (none fits in memory) keeps the first ones.
        let Some(i) = u32::try_from(dies.len()).ok().filter(|&i| i != NONE) else {
            break;
        };
        if let Some((Some(p), _)) = entry.parent {
            link_child(&mut dies, &mut last_child, p, i);
        }
        offsets.push(die.offset);
        dies.push(die);
        tree.open(&entry, Some(i));
    }
    // Resolve references once, so later lookups are plain indexing.
    let index = OffsetIndex::new(&offsets);
    for die in &mut dies {
        die.ty = index.find(die.ty);
        if die.specification != NONE {
            die.specification = index.find(die.specification);
        }
    }
    Ok(UnitDies { dies, strings })
}

/// Links entry `i` as the last recorded child of `p` (`last_child` holds the last
/// child of each recorded parent still open, by parent index).
#[inline]
fn link_child(dies: &mut [Die<'_>], last_child: &mut Vec<(u32, u32)>, p: u32, i: u32) {
    while last_child.last().is_some_and(|(q, _)| *q > p) {
        last_child.pop();
    }
    match last_child.last_mut() {
        Some((q, last)) if *q == p => {
            dies[*last as usize].next_sibling = i;
            *last = i;
        }
        _ => {
            dies[p as usize].first_child = i;
            last_child.push((p, i));
        }
    }
}

/// Finds an entry by unit offset in constant time: a bit per byte of the unit marks
/// the offsets of recorded entries, and the count of marks before each 64-bit word
/// turns a mark into the entry's index (a rank query: one load and a popcount).
struct OffsetIndex {
    bits: Vec<u64>,
    /// Marks in all words before each word.
    before: Vec<u32>,
}

impl OffsetIndex {
    fn new(offsets: &[u32]) -> Self {
        // (`NONE` marks an offset past 4 GiB: not indexed.)
        let known = |o: &&u32| **o != NONE;
        let words = offsets
            .iter()
            .rfind(known)
            .map_or(0, |&o| (o as usize >> 6) + 1);
        let mut bits = vec![0u64; words];
        for &o in offsets.iter().filter(known) {
            bits[o as usize >> 6] |= 1 << (o & 63);
        }
        let mut before = Vec::with_capacity(words);
        let mut n = 0u32;
        for w in &bits {
            before.push(n);
            n += w.count_ones();
        }
        OffsetIndex { bits, before }
    }

    /// Index of the entry at `offset`, or `NONE`.
    fn find(&self, offset: u32) -> u32 {
        let word = offset as usize >> 6;
        let Some(&w) = self.bits.get(word) else {
            return NONE;
        };
        let bit = 1u64 << (offset & 63);
        if w & bit == 0 {
            return NONE;
        }
        self.before[word] + (w & (bit - 1)).count_ones()
    }
}

/// The attributes layouts use; the rest (lines, columns, siblings, ...) are skipped
/// without being decoded.
fn wanted(name: gimli::DwAt, tag: DwTag) -> bool {
    match name {
        dw::DW_AT_name
        | dw::DW_AT_byte_size
        | dw::DW_AT_type
        | dw::DW_AT_alignment
        | dw::DW_AT_declaration
        | dw::DW_AT_data_member_location
        | dw::DW_AT_data_bit_offset
        | dw::DW_AT_bit_offset
        | dw::DW_AT_bit_size
        | dw::DW_AT_count
        | dw::DW_AT_upper_bound
        | dw::DW_AT_specification
        | dw::DW_AT_location
        | dw::DW_AT_const_value => true,
        dw::DW_AT_decl_file => tag != dw::DW_TAG_member,
        dw::DW_AT_decl_line => tag == dw::DW_TAG_variable,
        _ => false,
    }
}

/// Reads the attributes of the entry whose abbreviation was just read into `die` (its
/// tag set): the wanted ones decoded, each run of the others skipped in one call.
pub(crate) fn read_wanted<'d>(
    dwarf: &Dwarf<'d>,
    unit: &Unit<'d>,
    strings: &Strings<'d>,
    raw: &mut gimli::EntriesRaw<'_, Reader<'d>>,
    abbrev: &gimli::Abbreviation,
    die: &mut Die<'d>,
) -> gimli::Result<()> {
    let specs = abbrev.attributes();
    let mut skip_from = 0;
    for (k, spec) in specs.iter().enumerate() {
        if wanted(spec.name(), die.tag) {
            raw.skip_attributes(&specs[skip_from..k])?;
            let attr = raw.read_attribute_inline(*spec)?;
            read_attr(dwarf, unit, strings, die, attr)?;
            skip_from = k + 1;
        }
    }
    raw.skip_attributes(&specs[skip_from..])
}

#[inline]
fn read_attr<'d>(
    dwarf: &Dwarf<'d>,
    unit: &Unit<'d>,
    strings: &Strings<'d>,
    die: &mut Die<'d>,
    attr: gimli::Attribute<Reader<'d>>,
) -> gimli::Result<()> {
    // The raw form's value: every use below accepts the raw forms, and normalising
    // (`Attribute::value`) cost a tenth of reading a unit.
    let value = attr.raw_value();
    match attr.name() {
        dw::DW_AT_name => {
            let offset = |o: usize| u32::try_from(o).ok();
            die.name = match value {
                AttributeValue::String(s) => {
                    // Where the inline name sits in `.debug_info`.
                    let at = (s.slice().as_ptr() as usize)
                        .checked_sub(strings.debug_info.as_ptr() as usize)
                        .filter(|&a| a < strings.debug_info.len());
                    at.and_then(offset).map_or(Name::None, Name::Inline)
                }
                AttributeValue::DebugStrRef(o) => offset(o.0).map_or(Name::None, Name::Str),
                AttributeValue::DebugLineStrRef(o) => offset(o.0).map_or(Name::None, Name::LineStr),
                AttributeValue::DebugStrOffsetsIndex(i) => {
                    offset(dwarf.string_offset(unit, i)?.0).map_or(Name::None, Name::Str)
                }
                _ => Name::None,
            };
        }
        dw::DW_AT_byte_size => die.set_byte_size(attr.udata_value()),
        dw::DW_AT_type => die.ty = unit_ref(&value),
        dw::DW_AT_alignment => die.rare_mut().alignment = attr.udata_value(),
        dw::DW_AT_declaration => die.declaration = !matches!(value, AttributeValue::Flag(false)),
        dw::DW_AT_decl_file => {
            die.decl_file = attr
                .udata_value()
                .and_then(|f| u32::try_from(f).ok())
                .unwrap_or(NONE)
        }
        dw::DW_AT_decl_line => {
            die.decl_line = attr
                .udata_value()
                .and_then(|l| u32::try_from(l).ok())
                .unwrap_or(NONE)
        }
        dw::DW_AT_data_member_location => {
            // A constant, or (DWARF 2 style) an expression `DW_OP_plus_uconst N`.
            die.set_member_location(match attr.exprloc_value() {
                Some(expr) => match expr.operations(unit.encoding()).next() {
                    Ok(Some(gimli::Operation::PlusConstant { value })) => Some(value),
                    _ => None,
                },
                None => attr.udata_value(),
            });
        }
        dw::DW_AT_data_bit_offset => die.rare_mut().data_bit_offset = attr.udata_value(),
        dw::DW_AT_bit_offset => die.rare_mut().bit_offset = attr.udata_value(),
        dw::DW_AT_bit_size => die.rare_mut().bit_size = attr.udata_value(),
        dw::DW_AT_count => die.rare_mut().count = attr.udata_value(),
        dw::DW_AT_const_value => {
            die.rare_mut().const_value = match value {
                AttributeValue::Sdata(v) => Some(v),
                _ => attr.udata_value().map(|u| u as i64),
            };
        }
        dw::DW_AT_upper_bound => {
            // An upper bound of -1 (all ones) marks a flexible array: count 0.
            die.rare_mut().count = match value {
                AttributeValue::Sdata(-1) => Some(0),
                _ => attr.udata_value().map(|u| u.wrapping_add(1)),
            };
        }
        dw::DW_AT_specification => die.specification = unit_ref(&value),
        dw::DW_AT_location => {
            if let Some(expr) = attr.exprloc_value() {
                let mut ops = expr.operations(unit.encoding());
                die.rare_mut().address = match ops.next() {
                    Ok(Some(gimli::Operation::Address { address })) => Some(address),
                    Ok(Some(gimli::Operation::AddressIndex { index })) => {
                        Some(dwarf.address(unit, index)?)
                    }
                    _ => None,
                };
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_entry_fits_one_cache_line() {
        // Millions of entries per vmlinux: the table's size is the loader's memory traffic.
        assert_eq!(std::mem::size_of::<super::Die<'_>>(), 64);
        assert_eq!(std::mem::size_of::<super::Name>(), 8);
    }
}
