//! Reads one compile unit's DIEs into a compact per-unit table of the entries that
//! describe types and global variables. Attributes of every other entry are skipped
//! without decoding.

use gimli::{AttributeValue, DwTag, EndianSlice, RunTimeEndian, constants as dw};

pub(crate) type Reader<'d> = EndianSlice<'d, RunTimeEndian>;
pub(crate) type Dwarf<'d> = gimli::Dwarf<Reader<'d>>;
pub(crate) type Unit<'d> = gimli::Unit<Reader<'d>>;

/// The attributes of one type-describing entry that layouts need.
#[derive(Debug)]
pub(crate) struct Die<'d> {
    pub offset: usize,
    pub tag: DwTag,
    pub name: Option<&'d str>,
    pub byte_size: Option<u64>,
    /// `DW_AT_type`: a unit offset while reading, the index of the entry in
    /// `UnitDies::dies` once `read_unit` returns (`None` when it names no recorded entry).
    pub ty: Option<usize>,
    pub alignment: Option<u64>,
    pub declaration: bool,
    pub decl_file: Option<u64>,
    pub member_location: Option<u64>,
    pub data_bit_offset: Option<u64>,
    /// DWARF 2-4 `DW_AT_bit_offset` (counted from the storage unit's most significant bit).
    pub bit_offset: Option<u64>,
    pub bit_size: Option<u64>,
    /// Subranges: element count (`DW_AT_count`, or `DW_AT_upper_bound` + 1).
    pub count: Option<u64>,
    /// Variables: the address from a `DW_OP_addr`/`DW_OP_addrx` location.
    pub address: Option<u64>,
    /// Variables: `DW_AT_specification` (the declaration this defines); an index once
    /// `read_unit` returns, like `ty`.
    pub specification: Option<usize>,
    /// First recorded child (members of a struct/union, subranges of an array,
    /// parameters of a subroutine type) and next recorded sibling; `NONE` if none.
    pub first_child: u32,
    pub next_sibling: u32,
    /// True for a variable entry that is a direct child of the compile unit.
    pub top_level: bool,
}

impl Default for Die<'_> {
    fn default() -> Self {
        Die {
            offset: 0,
            tag: dw::DW_TAG_null,
            name: None,
            byte_size: None,
            ty: None,
            alignment: None,
            declaration: false,
            decl_file: None,
            member_location: None,
            data_bit_offset: None,
            bit_offset: None,
            bit_size: None,
            count: None,
            address: None,
            specification: None,
            first_child: NONE,
            next_sibling: NONE,
            top_level: false,
        }
    }
}

/// No entry (end of a child list).
pub(crate) const NONE: u32 = u32::MAX;

/// All type and variable entries of one unit, in offset order.
pub(crate) struct UnitDies<'d> {
    pub dies: Vec<Die<'d>>,
}

impl<'d> UnitDies<'d> {
    /// Index of the entry at a unit offset.
    pub fn index_of(&self, offset: usize) -> Option<usize> {
        self.dies.binary_search_by_key(&offset, |d| d.offset).ok()
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

fn is_recorded(tag: DwTag, parent: Option<DwTag>) -> bool {
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
        dw::DW_TAG_formal_parameter | dw::DW_TAG_unspecified_parameters => {
            parent == Some(dw::DW_TAG_subroutine_type)
        }
        _ => false,
    }
}

fn unit_ref(value: &AttributeValue<Reader<'_>>) -> Option<usize> {
    match value {
        AttributeValue::UnitRef(off) => Some(off.0),
        _ => None,
    }
}

/// Walks every entry of `unit`, recording the ones that describe types and variables.
pub(crate) fn read_unit<'d>(dwarf: &Dwarf<'d>, unit: &Unit<'d>) -> gimli::Result<UnitDies<'d>> {
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
        let recorded = is_recorded(tag, parent_tag)
            && (tag != dw::DW_TAG_variable || parent_tag == Some(dw::DW_TAG_compile_unit));
        let mut index = None;
        if recorded {
            let mut die = Die {
                offset,
                tag,
                top_level: tag == dw::DW_TAG_variable,
                ..Die::default()
            };
            for spec in abbrev.attributes() {
                let attr = raw.read_attribute(*spec)?;
                read_attr(dwarf, unit, &mut die, attr)?;
            }
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
    let offsets: Vec<usize> = dies.iter().map(|d| d.offset).collect();
    let resolve = |r: Option<usize>| r.and_then(|o| offsets.binary_search(&o).ok());
    for d in &mut dies {
        d.ty = resolve(d.ty);
        d.specification = resolve(d.specification);
    }
    Ok(UnitDies { dies })
}

fn read_attr<'d>(
    dwarf: &Dwarf<'d>,
    unit: &Unit<'d>,
    die: &mut Die<'d>,
    attr: gimli::Attribute<Reader<'d>>,
) -> gimli::Result<()> {
    let value = attr.value();
    match attr.name() {
        dw::DW_AT_name => {
            let s = dwarf.attr_string(unit, value)?;
            die.name = s.to_string().ok();
        }
        dw::DW_AT_byte_size => die.byte_size = attr.udata_value(),
        dw::DW_AT_type => die.ty = unit_ref(&value),
        dw::DW_AT_alignment => die.alignment = attr.udata_value(),
        dw::DW_AT_declaration => die.declaration = !matches!(value, AttributeValue::Flag(false)),
        dw::DW_AT_decl_file => die.decl_file = attr.udata_value(),
        dw::DW_AT_data_member_location => die.member_location = attr.udata_value(),
        dw::DW_AT_data_bit_offset => die.data_bit_offset = attr.udata_value(),
        dw::DW_AT_bit_offset => die.bit_offset = attr.udata_value(),
        dw::DW_AT_bit_size => die.bit_size = attr.udata_value(),
        dw::DW_AT_count => die.count = attr.udata_value(),
        dw::DW_AT_upper_bound => {
            // An upper bound of -1 (all ones) marks a flexible array: count 0.
            die.count = match value {
                AttributeValue::Sdata(-1) => Some(0),
                _ => attr.udata_value().map(|u| u.wrapping_add(1)),
            };
        }
        dw::DW_AT_specification => die.specification = unit_ref(&value),
        dw::DW_AT_location => {
            if let Some(expr) = attr.exprloc_value() {
                let mut ops = expr.operations(unit.encoding());
                die.address = match ops.next() {
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
