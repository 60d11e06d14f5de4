//! DWARF-side model: struct/union layouts with members, holes and padding as pahole
//! reports them, and global variables with their types.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::TypeRef;

/// Index of a struct in `Image::structs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct StructId(pub usize);

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
/// A struct or a union.
#[serde(rename_all = "lowercase")]
pub enum AggregateKind {
    /// `struct`.
    #[default]
    Struct,
    /// `union`.
    Union,
}

impl AggregateKind {
    /// `struct` or `union`, as C spells it.
    pub fn keyword(self) -> &'static str {
        match self {
            AggregateKind::Struct => "struct",
            AggregateKind::Union => "union",
        }
    }
}

/// A run of unused bytes between two members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hole {
    /// Byte offset where the hole starts (the end of the member before it).
    pub offset: u64,
    /// Its size in bytes.
    pub size: u64,
}

/// Unused bits inside a bitfield storage unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BitHole {
    /// Byte offset of the member before the hole.
    pub offset: u64,
    /// Bit position (from the start of `offset`) where the hole starts.
    pub bit_offset: u64,
    /// Its size in bits.
    pub bits: u64,
}

/// One member. Offsets are from the start of the outermost struct, also for the
/// members of anonymous structs and unions expanded inline.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Default)]
pub struct Member<'d> {
    /// `None` for an anonymous struct/union member.
    pub name: Option<&'d str>,
    /// The type as data (kind, qualifiers, dimensions) and its spellings; written as
    /// its C spelling (`type_name`).
    #[serde(rename = "type", serialize_with = "c_spelling")]
    pub ctype: TypeRef<'d>,
    /// Byte offset; for a bitfield, the start of its storage unit (as pahole prints).
    pub offset: u64,
    /// Size in bytes; for a bitfield, the size of its storage unit (its type's size).
    pub size: u64,
    /// Bitfields only: bit position inside the storage unit.
    pub bit_offset: Option<u32>,
    /// Bitfields only: width in bits.
    pub bit_size: Option<u32>,
    /// Flexible (`[]`) or zero-length (`[0]`) array: takes no room.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub flexible: bool,
    /// Members of an anonymous struct/union, laid inline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nested: Option<Box<StructLayout<'d>>>,
    /// `DW_AT_alignment` on the member (`__aligned__(N)` in the source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alignment: Option<u32>,
    /// Bytes and bits unused after this member, attributed as pahole does.
    #[serde(skip_serializing_if = "is_zero")]
    pub hole: u32,
    /// Unused bits after this member.
    #[serde(skip_serializing_if = "is_zero")]
    pub bit_hole: u32,
    /// When the member's type is a struct (not through a typedef): that struct's gaps
    /// and flexible arrays, which pahole notes after the member.
    #[serde(skip)]
    pub type_gaps: TypeGaps,
    /// A pointer member to an anonymous struct/union: that struct, offsets from its
    /// own start (pahole lists it; not part of this struct's storage).
    #[serde(skip)]
    pub pointee: Option<Box<StructLayout<'d>>>,
    /// pahole's natural alignment of the member's type (for packed inference).
    #[serde(skip)]
    pub natural_alignment: u32,
}

/// What pahole (1.32) notes after a member whose type is a struct: the struct's tail
/// padding, how many holes it has, and whether it ends in a flexible array or holds
/// one in a member struct (through typedefs, at any depth). All zero for other types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct TypeGaps {
    /// Unused bytes at the end of the struct.
    pub padding: u32,
    /// Unused bits at the end of its last bitfield storage unit.
    pub bit_padding: u32,
    /// Byte holes and bit holes, counted as pahole counts them.
    pub holes: u32,
    /// Bit holes, counted as pahole counts them.
    pub bit_holes: u32,
    /// Its last member is a one-dimensional array of no (or zero) elements.
    pub flexible: bool,
    /// A member's struct type (typedefs and qualifiers followed) ends in a flexible
    /// array or itself holds one that does.
    pub embedded_flexible: bool,
}

impl TypeGaps {
    /// Nothing to note.
    pub fn is_empty(&self) -> bool {
        *self == TypeGaps::default()
    }
}

fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// `v` as a `u32`, `u32::MAX` when it does not fit: the model keeps bit positions and
/// widths, holes and paddings of members in 32 bits (pahole keeps them in 8 and 16),
/// which only a corrupt file exceeds.
pub fn saturate_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn c_spelling<S: serde::Serializer>(t: &TypeRef<'_>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&t.c)
}

impl Member<'_> {
    /// The type as C spells it (`struct list_head`, `char *const`, `void (*)(int)`).
    pub fn type_name(&self) -> &str {
        &self.ctype.c
    }

    /// First bit covered, from the start of the outermost struct.
    pub fn start_bit(&self) -> u64 {
        self.offset
            .saturating_mul(8)
            .saturating_add(u64::from(self.bit_offset.unwrap_or(0)))
    }

    /// One past the last bit covered.
    pub fn end_bit(&self) -> u64 {
        match self.bit_size {
            Some(bits) => self.start_bit().saturating_add(u64::from(bits)),
            None => self.offset.saturating_add(self.size).saturating_mul(8),
        }
    }

    /// It is a bitfield (it has a bit size).
    pub fn is_bitfield(&self) -> bool {
        self.bit_size.is_some()
    }
}

/// A struct or union definition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Default)]
pub struct StructLayout<'d> {
    /// Empty for anonymous nested aggregates.
    pub name: &'d str,
    /// Struct or union.
    pub kind: AggregateKind,
    /// Declaring source file, when DWARF names it (borrowed from a snapshot's names,
    /// owned when built from DWARF).
    pub decl_file: Option<Cow<'d, str>>,
    /// Its size in bytes.
    pub size: u64,
    /// Alignment in bytes: `DW_AT_alignment` when present, else the largest member's.
    pub alignment: u64,
    /// `DW_AT_alignment` (e.g. from `____cacheline_aligned`), when present.
    pub explicit_alignment: Option<u64>,
    /// Its members, anonymous structs and unions with theirs nested.
    pub members: Vec<Member<'d>>,
    /// Its holes, as pahole finds them.
    pub holes: Vec<Hole>,
    /// Its bit holes.
    pub bit_holes: Vec<BitHole>,
    /// Unused bytes at the end.
    pub padding: u64,
    /// Unused bits at the end of the last bitfield storage unit.
    pub bit_padding: u64,
    /// Unused bytes and bits before the first member.
    #[serde(skip_serializing_if = "is_zero")]
    pub pre_hole: u64,
    /// Unused bits before the first member.
    #[serde(skip_serializing_if = "is_zero")]
    pub pre_bit_hole: u64,
    /// Laid out as `__attribute__((__packed__))` (inferred the way pahole infers it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub packed: bool,
    /// An anonymous struct/union reached through a typedef; `name` is the typedef's.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub typedef: bool,
    /// Read from a Rust unit (`--lang all`): bindgen's copy of the C struct of its name,
    /// never paired with or taken for the C one. Snapshots hold C layouts only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rust: bool,
}

impl<'d> StructLayout<'d> {
    /// Members at every nesting level, depth first, with their depth.
    pub fn flat_members(&self) -> Vec<(usize, &Member<'d>)> {
        let mut out = Vec::new();
        fn walk<'a, 'd>(
            s: &'a StructLayout<'d>,
            depth: usize,
            out: &mut Vec<(usize, &'a Member<'d>)>,
        ) {
            for m in &s.members {
                out.push((depth, m));
                if let Some(n) = &m.nested {
                    walk(n, depth + 1, out);
                }
            }
        }
        walk(self, 0, &mut out);
        out
    }

    /// The bytes of all its holes.
    pub fn sum_holes(&self) -> u64 {
        // Saturating: a forged snapshot's sizes can add up past 2^64.
        self.holes.iter().fold(0, |s, h| s.saturating_add(h.size))
    }
}

/// A global variable from DWARF: its address (link-time; for per-CPU variables the
/// per-CPU section is usually linked at 0) and its type.
#[derive(Debug, Clone, Serialize)]
pub struct Variable<'d> {
    /// The variable's name.
    pub name: &'d str,
    /// Its link-time address.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address: u64,
    /// The type as data: kind, qualifiers, dimensions; written as its C spelling.
    #[serde(rename = "type", serialize_with = "c_spelling")]
    pub ctype: TypeRef<'d>,
    /// Byte size of the type.
    pub size: Option<u64>,
    /// The struct/union its type resolves to through typedefs, qualifiers and arrays.
    /// Not in JSON: an index into a list that only this load holds (`show --symbol`
    /// prints the layout itself, laid at the address).
    #[serde(skip)]
    pub layout: Option<StructId>,
    /// True when the type resolves through an array of structs.
    pub is_array: bool,
    /// `DW_AT_alignment` on the variable.
    pub alignment: Option<u64>,
    /// The file that declares it, when DWARF names it.
    pub decl_file: Option<Cow<'d, str>>,
    /// The definition's line in `decl_file` (not in JSON): where the compiler puts the
    /// object among its unit's others of one section (`whatif --read-mostly`).
    #[serde(skip)]
    pub decl_line: Option<u32>,
    /// When the unit declared it before its definition (`DW_AT_specification`): the
    /// line of that declaration in the same file, or 0 for one in a header (not in
    /// JSON). GCC orders a unit's objects by when it made each one's symbol, and a
    /// declaration with a section attribute (every `DECLARE_PER_CPU`) makes it: such
    /// an object goes among the others by this line (`link::ordering_line`).
    #[serde(skip)]
    pub declared: Option<u32>,
}

impl Variable<'_> {
    /// The type as C spells it.
    pub fn type_name(&self) -> &str {
        &self.ctype.c
    }
}

#[cfg(test)]
impl Member<'static> {
    /// A named scalar member (`x` as its C type) at `offset` of `size` bytes aligned
    /// to `align` (tests of relaying structs).
    pub(crate) fn test_scalar(name: &'static str, offset: u64, size: u64, align: u32) -> Self {
        Member {
            name: Some(name),
            offset,
            size,
            natural_alignment: align,
            ctype: std::sync::Arc::new(super::CType {
                kind: super::TypeKind::Base,
                c: "x".into(),
                ..super::CType::default()
            })
            .into(),
            ..Member::default()
        }
    }
}
