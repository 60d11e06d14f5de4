//! A struct layout laid at a real address (or at 0, as pahole does): which line each
//! member starts and ends on, and where line boundaries fall between members.

use serde::Serialize;

use crate::model::{AggregateKind, BitHole, Hole, Member, StructLayout};

/// One member with its lines. Lines are counted from the line holding the
/// struct's first byte (line 0), so `show --struct` reads like pahole.
#[derive(Debug, Clone, Serialize)]
pub struct LaidMember<'a, 'd> {
    /// The member's name; `None` for an anonymous struct or union.
    pub name: Option<&'d str>,
    /// Its type, as pahole spells it.
    #[serde(rename = "type")]
    pub type_name: &'a str,
    /// Its byte offset from the struct's start (storage unit for bitfields).
    pub offset: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its bit offset within the storage unit (bitfields).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bit_offset: Option<u64>,
    /// Its width in bits (bitfields).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bit_size: Option<u64>,
    /// Flexible (`[]`) or zero-length (`[0]`) array: takes no room.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub flexible: bool,
    /// The line its first byte is on.
    pub first_line: u64,
    /// The line its last byte is on.
    pub last_line: u64,
    /// Starts on a later line than everything before it: a boundary falls before it.
    #[serde(skip)]
    pub boundary_before: Option<u64>,
    /// For an anonymous struct or union: which.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<AggregateKind>,
    /// For an anonymous struct or union: its members, laid in place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<LaidMember<'a, 'd>>>,
    /// For an anonymous struct or union: its holes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holes: Option<&'a [Hole]>,
    /// The member's own `DW_AT_alignment`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alignment: Option<u64>,
    /// Bytes and bits unused right after it, as pahole attributes them.
    #[serde(skip_serializing_if = "is_zero")]
    pub hole: u64,
    /// Unused bits right after it.
    #[serde(skip_serializing_if = "is_zero")]
    pub bit_hole: u64,
    /// The model's member it was laid from.
    #[serde(skip)]
    pub source: &'a Member<'d>,
}

/// A struct laid at `base`.
#[derive(Debug, Clone, Serialize)]
pub struct LaidStruct<'a, 'd> {
    /// The struct's name.
    pub name: &'d str,
    /// Struct or union.
    pub kind: AggregateKind,
    /// The file that declares it, when the debug info says.
    pub decl_file: Option<&'a str>,
    /// Its size in bytes.
    pub size: u64,
    /// Its alignment.
    pub alignment: u64,
    /// Its own `DW_AT_alignment`, when it has one.
    pub explicit_alignment: Option<u64>,
    /// Address (or per-CPU offset) of the instance; `None` when laid at offset 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub base: Option<u64>,
    /// The line size it is laid on.
    pub line_size: u64,
    /// Lines the struct spans when laid at `base` (pahole's "cachelines" at 0).
    pub cachelines: u64,
    /// Bytes used in the last line, 0 when it ends exactly on a boundary (as pahole).
    pub last_cacheline: u64,
    /// Members, counted as pahole counts them.
    pub member_count: usize,
    /// The bytes of its members.
    pub sum_members: u64,
    /// The bits of its bitfields.
    pub sum_bitfield_bits: u64,
    /// Its members, laid.
    pub members: Vec<LaidMember<'a, 'd>>,
    /// Its holes, as pahole finds them.
    pub holes: &'a [Hole],
    /// Its bit holes.
    pub bit_holes: &'a [BitHole],
    /// Unused bytes at its end.
    pub padding: u64,
    /// Unused bits at the end of the last bitfield storage unit.
    pub bit_padding: u64,
    /// Cache-line groups (`__cacheline_group_begin__G` .. `_end__G`), from offset 0.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<super::Group>,
    /// Unused bytes before the first member.
    #[serde(skip_serializing_if = "is_zero")]
    pub pre_hole: u64,
    /// Unused bits before the first member.
    #[serde(skip_serializing_if = "is_zero")]
    pub pre_bit_hole: u64,
    /// Laid out as `__attribute__((__packed__))` (inferred the way pahole infers it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub packed: bool,
    /// An anonymous struct or union reached through a typedef; `name` is the typedef's.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub typedef: bool,
    /// Bindgen's Rust copy, read from a Rust unit (`--lang all`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rust: bool,
    /// The model's layout it was laid from.
    #[serde(skip)]
    pub layout: &'a StructLayout<'d>,
}

/// Lays `layout` at `base` (0 for the pahole view) on lines of `line_size` bytes.
pub fn lay<'a, 'd>(
    layout: &'a StructLayout<'d>,
    base: Option<u64>,
    line_size: u64,
) -> LaidStruct<'a, 'd> {
    let start = base.unwrap_or(0);
    let first = start / line_size;
    let mut last_line_seen = 0;
    let members = lay_members(
        &layout.members,
        start,
        first,
        line_size,
        &mut last_line_seen,
    );
    let end = start.saturating_add(layout.size.max(1));
    let cachelines = (end - 1) / line_size - first + 1;
    // Bytes used in the last line; 0 when the struct ends on a line boundary.
    let last_cacheline = start.saturating_add(layout.size) % line_size;
    LaidStruct {
        name: layout.name,
        kind: layout.kind,
        decl_file: layout.decl_file.as_deref(),
        size: layout.size,
        alignment: layout.alignment,
        explicit_alignment: layout.explicit_alignment,
        base,
        line_size,
        cachelines: if layout.size == 0 { 0 } else { cachelines },
        last_cacheline,
        member_count: layout.members.len(),
        sum_members: sum_members(layout),
        sum_bitfield_bits: sum_bitfield_bits(layout),
        members,
        holes: &layout.holes,
        bit_holes: &layout.bit_holes,
        padding: layout.padding,
        bit_padding: layout.bit_padding,
        groups: super::groups(layout, line_size),
        pre_hole: layout.pre_hole,
        pre_bit_hole: layout.pre_bit_hole,
        packed: layout.packed,
        typedef: layout.typedef,
        rust: layout.rust,
        layout,
    }
}

fn lay_members<'a, 'd>(
    members: &'a [Member<'d>],
    start: u64,
    first: u64,
    line_size: u64,
    last_line_seen: &mut u64,
) -> Vec<LaidMember<'a, 'd>> {
    members
        .iter()
        .map(|m| {
            let begin = start.saturating_add(m.offset);
            let first_line = begin / line_size - first;
            let last_line = begin.saturating_add(m.size.max(1) - 1) / line_size - first;
            let boundary_before = (first_line > *last_line_seen).then_some(first_line);
            *last_line_seen = (*last_line_seen).max(first_line);
            let nested = m
                .nested
                .as_ref()
                .map(|n| lay_members(&n.members, start, first, line_size, last_line_seen));
            LaidMember {
                name: m.name,
                type_name: m.type_name(),
                offset: m.offset,
                size: m.size,
                bit_offset: m.bit_offset.map(u64::from),
                bit_size: m.bit_size.map(u64::from),
                flexible: m.flexible,
                first_line,
                last_line,
                boundary_before,
                kind: m.nested.as_ref().map(|n| n.kind),
                members: nested,
                holes: m.nested.as_ref().map(|n| n.holes.as_slice()),
                alignment: m.alignment.map(u64::from),
                hole: u64::from(m.hole),
                bit_hole: u64::from(m.bit_hole),
                source: m,
            }
        })
        .collect()
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Bytes taken by the non-bitfield members of one level, as pahole sums them.
pub fn sum_members(layout: &StructLayout<'_>) -> u64 {
    layout
        .members
        .iter()
        .filter(|m| !m.is_bitfield())
        // Saturating: a forged snapshot's sizes can add up past 2^64.
        .fold(0, |s, m| s.saturating_add(m.size))
}

/// Bits taken by the bitfield members of one level.
pub fn sum_bitfield_bits(layout: &StructLayout<'_>) -> u64 {
    layout
        .members
        .iter()
        .filter_map(|m| m.bit_size.map(u64::from))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Member;

    fn member(name: &'static str, offset: u64, size: u64) -> Member<'static> {
        Member {
            name: Some(name),
            ctype: std::sync::Arc::new(crate::model::CType {
                c: "long".into(),
                ..Default::default()
            })
            .into(),
            offset,
            size,
            bit_offset: None,
            bit_size: None,
            flexible: false,
            nested: None,
            ..Member::default()
        }
    }

    fn layout() -> StructLayout<'static> {
        let mut l = StructLayout {
            name: "s",
            kind: AggregateKind::Struct,
            decl_file: None,
            size: 136,
            alignment: 8,
            explicit_alignment: None,
            members: vec![member("a", 0, 4), member("b", 8, 56), member("c", 64, 72)],
            holes: vec![],
            bit_holes: vec![],
            padding: 0,
            bit_padding: 0,
            ..StructLayout::default()
        };
        crate::layout::holes::fill(&mut l, 0);
        l
    }

    /// A forged snapshot's member sizes and holes can add up past 2^64: the sums
    /// saturate (they wrapped to 7 and 0 before).
    #[test]
    fn sums_of_forged_sizes_saturate() {
        let mut l = layout();
        l.members = vec![member("a", 0, u64::MAX), member("b", 8, 8)];
        assert_eq!(sum_members(&l), u64::MAX);
        l.holes = vec![
            Hole {
                offset: 0,
                size: u64::MAX,
            },
            Hole { offset: 8, size: 1 },
        ];
        assert_eq!(l.sum_holes(), u64::MAX);
    }

    #[test]
    fn at_offset_zero_like_pahole() {
        let l = layout();
        let laid = lay(&l, None, 64);
        assert_eq!(laid.cachelines, 3);
        assert_eq!(laid.last_cacheline, 8);
        assert_eq!(laid.sum_members, 132);
        assert_eq!(l.holes, vec![Hole { offset: 4, size: 4 }]);
        let lines: Vec<(u64, u64, Option<u64>)> = laid
            .members
            .iter()
            .map(|m| (m.first_line, m.last_line, m.boundary_before))
            .collect();
        assert_eq!(lines, vec![(0, 0, None), (0, 0, None), (1, 2, Some(1))]);
    }

    #[test]
    fn at_instance_address_lines_break_elsewhere() {
        let l = layout();
        // At ...be0 (offset 0x20 in its line) member b (8..64) crosses into line 1.
        let laid = lay(&l, Some(0xffff_ffff_82a5_1be0), 64);
        assert_eq!(laid.cachelines, 3);
        let lines: Vec<(u64, u64)> = laid
            .members
            .iter()
            .map(|m| (m.first_line, m.last_line))
            .collect();
        assert_eq!(lines, vec![(0, 0), (0, 1), (1, 2)]);
        assert_eq!(laid.last_cacheline, 40);
    }
}
