//! Reads one compile unit's DIEs into a compact per-unit table of the entries that
//! describe types and global variables. Attributes of every other entry are skipped
//! without decoding.

use gimli::{AttributeValue, DwTag, EndianSlice, RunTimeEndian, constants as dw};

pub(crate) type Reader<'d> = EndianSlice<'d, RunTimeEndian>;
pub(crate) type Dwarf<'d> = gimli::Dwarf<Reader<'d>>;
pub(crate) type Unit<'d> = gimli::Unit<Reader<'d>>;

/// The attributes of one type-describing entry that layouts need. Kept small (most
/// entries are struct members, millions per vmlinux); rare attributes live in `Rare`.
#[derive(Debug)]
pub(crate) struct Die<'d> {
    /// `DW_AT_name`, resolved only when asked (`UnitDies::name`): most entries are
    /// members whose names are never printed.
    pub name: Name<'d>,
    pub byte_size: Option<u64>,
    pub member_location: Option<u64>,
    pub rare: Option<Box<Rare>>,
    pub offset: u32,
    /// `DW_AT_type`: a unit offset while reading, then the index of the entry in
    /// `UnitDies::dies` once `read_unit` returns; `NONE` when absent or unresolved.
    ty: u32,
    /// Variables: `DW_AT_specification`, resolved like `ty`.
    specification: u32,
    decl_file: u32,
    /// First recorded child (members of a struct/union, subranges of an array,
    /// parameters of a subroutine type) and next recorded sibling; `NONE` if none.
    pub first_child: u32,
    pub next_sibling: u32,
    pub tag: DwTag,
    pub declaration: bool,
    /// A variable that is a direct child of the compile unit.
    pub top_level: bool,
}

/// Where a name is: inline in `.debug_info`, or at an offset in a string section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Name<'d> {
    None,
    Inline(&'d [u8]),
    Str(usize),
    LineStr(usize),
}

impl Name<'_> {
    pub fn is_none(&self) -> bool {
        matches!(self, Name::None)
    }
}

/// The string sections names point into.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strings<'d> {
    pub debug_str: &'d [u8],
    pub debug_line_str: &'d [u8],
}

impl<'d> Strings<'d> {
    /// The bytes of a name, without its terminating NUL.
    pub fn bytes(&self, name: Name<'d>) -> Option<&'d [u8]> {
        let (data, at) = match name {
            Name::None => return None,
            Name::Inline(b) => return Some(b),
            Name::Str(o) => (self.debug_str, o),
            Name::LineStr(o) => (self.debug_line_str, o),
        };
        let rest = data.get(at..)?;
        Some(&rest[..memchr::memchr(0, rest)?])
    }

    /// The name as text; `None` when absent or not UTF-8.
    pub fn text(&self, name: Name<'d>) -> Option<&'d str> {
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

impl Die<'_> {
    pub fn ty(&self) -> Option<usize> {
        some(self.ty)
    }
    pub fn specification(&self) -> Option<usize> {
        some(self.specification)
    }
    pub fn decl_file(&self) -> Option<u64> {
        some(self.decl_file).map(|f| f as u64)
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
            byte_size: None,
            member_location: None,
            rare: None,
            offset: 0,
            ty: NONE,
            specification: NONE,
            decl_file: NONE,
            first_child: NONE,
            next_sibling: NONE,
            tag: dw::DW_TAG_null,
            declaration: false,
            top_level: false,
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
    let mut raw = unit.entries_raw(None)?;
    let mut dies: Vec<Die<'d>> = Vec::new();
    // Open entries with children: (depth, index in `dies` if recorded, tag).
    let mut stack: Vec<(isize, Option<u32>, DwTag)> = Vec::new();
    // Last recorded child of each recorded parent, by parent index.
    let mut last_child: Vec<(u32, u32)> = Vec::new();
    while !raw.is_empty() {
        let depth = raw.next_depth();
        let offset = raw.next_offset().0;
        let Some(abbrev) = raw.read_abbreviation()? else {
            continue;
        };
        while stack.last().is_some_and(|(d, _, _)| *d >= depth) {
            stack.pop();
        }
        let parent = stack.last().copied();
        let tag = abbrev.tag();
        let parent_tag = parent.map(|(_, _, t)| t);
        let recorded = is_recorded(tag, parent_tag, enumerators)
            && (tag != dw::DW_TAG_variable || parent_tag == Some(dw::DW_TAG_compile_unit));
        let mut index = None;
        if recorded {
            let mut die = Die {
                offset: u32::try_from(offset).unwrap_or(NONE),
                tag,
                top_level: tag == dw::DW_TAG_variable,
                ..Die::default()
            };
            // Read the wanted attributes; skip each run of unwanted ones in one call.
            let specs = abbrev.attributes();
            let mut skip_from = 0;
            for (k, spec) in specs.iter().enumerate() {
                if wanted(spec.name(), tag) {
                    raw.skip_attributes(&specs[skip_from..k])?;
                    let attr = raw.read_attribute_inline(*spec)?;
                    read_attr(dwarf, unit, &mut die, attr)?;
                    skip_from = k + 1;
                }
            }
            raw.skip_attributes(&specs[skip_from..])?;
            let i = dies.len() as u32;
            if let Some((_, Some(p), _)) = parent {
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
            dies.push(die);
            index = Some(i);
        } else {
            raw.skip_attributes(abbrev.attributes())?;
        }
        if abbrev.has_children() {
            stack.push((depth, index, tag));
        }
    }
    // Resolve references once, so later lookups are plain indexing.
    let index = OffsetIndex::new(&dies);
    for k in 0..dies.len() {
        let (ty, spec) = (dies[k].ty, dies[k].specification);
        dies[k].ty = index.find(&dies, ty);
        dies[k].specification = index.find(&dies, spec);
    }
    Ok(UnitDies { dies, strings })
}

/// Finds an entry by unit offset: entries are bucketed by offset / 32, so a lookup
/// scans the two or three entries of one bucket instead of binary searching them all.
struct OffsetIndex {
    /// `first[b]`: index of the first entry whose offset is at least `b * 32`.
    first: Vec<u32>,
}

impl OffsetIndex {
    const SHIFT: u32 = 5;

    fn new(dies: &[Die<'_>]) -> Self {
        let buckets = dies
            .last()
            .map_or(0, |d| (d.offset >> Self::SHIFT) as usize + 2);
        let mut first = vec![0u32; buckets];
        let mut next = 0usize;
        for (b, slot) in first.iter_mut().enumerate() {
            while next < dies.len() && ((dies[next].offset >> Self::SHIFT) as usize) < b {
                next += 1;
            }
            *slot = next as u32;
        }
        OffsetIndex { first }
    }

    /// Index of the entry at `offset`, or `NONE`.
    fn find(&self, dies: &[Die<'_>], offset: u32) -> u32 {
        let Some(&start) = self.first.get((offset >> Self::SHIFT) as usize) else {
            return NONE;
        };
        let mut i = start as usize;
        while let Some(d) = dies.get(i) {
            if d.offset >= offset {
                return if d.offset == offset { i as u32 } else { NONE };
            }
            i += 1;
        }
        NONE
    }
}

/// The attributes layouts use; the rest (lines, columns, siblings, ...) are skipped
/// without being decoded.
pub(crate) fn wanted(name: gimli::DwAt, tag: DwTag) -> bool {
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
        _ => false,
    }
}

pub(crate) fn read_attr<'d>(
    dwarf: &Dwarf<'d>,
    unit: &Unit<'d>,
    die: &mut Die<'d>,
    attr: gimli::Attribute<Reader<'d>>,
) -> gimli::Result<()> {
    let value = attr.value();
    match attr.name() {
        dw::DW_AT_name => {
            die.name = match value {
                AttributeValue::String(s) => Name::Inline(s.slice()),
                AttributeValue::DebugStrRef(o) => Name::Str(o.0),
                AttributeValue::DebugLineStrRef(o) => Name::LineStr(o.0),
                AttributeValue::DebugStrOffsetsIndex(i) => {
                    Name::Str(dwarf.string_offset(unit, i)?.0)
                }
                _ => Name::None,
            };
        }
        dw::DW_AT_byte_size => die.byte_size = attr.udata_value(),
        dw::DW_AT_type => die.ty = unit_ref(&value),
        dw::DW_AT_alignment => die.rare_mut().alignment = attr.udata_value(),
        dw::DW_AT_declaration => die.declaration = !matches!(value, AttributeValue::Flag(false)),
        dw::DW_AT_decl_file => {
            die.decl_file = attr
                .udata_value()
                .and_then(|f| u32::try_from(f).ok())
                .unwrap_or(NONE)
        }
        dw::DW_AT_data_member_location => {
            // A constant, or (DWARF 2 style) an expression `DW_OP_plus_uconst N`.
            die.member_location = match attr.exprloc_value() {
                Some(expr) => match expr.operations(unit.encoding()).next() {
                    Ok(Some(gimli::Operation::PlusConstant { value })) => Some(value),
                    _ => None,
                },
                None => attr.udata_value(),
            };
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
