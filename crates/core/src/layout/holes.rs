//! Holes, bit holes and tail padding of one struct level, computed the way pahole
//! does, so that the numbers agree with what kernel developers already read.

use crate::model::{AggregateKind, BitHole, Hole, StructLayout};

/// Fills `holes`, `bit_holes`, `padding` and `bit_padding` of `layout`, whose members
/// are offset by `base` bytes (non-zero for anonymous aggregates laid inline).
pub fn fill(layout: &mut StructLayout<'_>, base: u64) {
    layout.holes.clear();
    layout.bit_holes.clear();
    if layout.kind == AggregateKind::Union {
        let end = layout
            .members
            .iter()
            .map(|m| m.end_bit().div_ceil(8))
            .max()
            .unwrap_or(base);
        layout.padding = base.saturating_add(layout.size).saturating_sub(end);
        layout.bit_padding = 0;
        return;
    }
    let mut last_seen = base.saturating_mul(8);
    let mut in_bitfield = false;
    // End of the widest storage unit of the current bitfield run.
    let mut bitfield_end = 0u64;
    for m in &layout.members {
        let bit_start = m.start_bit();
        let bit_end = m.end_bit();
        let bit_hole_at = last_seen;
        let mut bit_hole = 0;
        let mut byte_hole_at = 0;
        let mut byte_hole = 0;
        if in_bitfield {
            let end = bit_start.min(bitfield_end);
            if end > last_seen {
                bit_hole = end - last_seen;
                last_seen = end;
            }
        }
        if m.is_bitfield() {
            let aligned_start = m.offset.saturating_mul(8);
            if last_seen < aligned_start && aligned_start <= bit_start {
                byte_hole_at = last_seen.div_ceil(8);
                byte_hole = m.offset.saturating_sub(byte_hole_at);
                last_seen = aligned_start;
            }
            if bit_start > last_seen {
                bit_hole += bit_start - last_seen;
            }
            let unit_end = aligned_start.saturating_add(m.size.saturating_mul(8));
            if !in_bitfield || bit_start >= bitfield_end {
                in_bitfield = true;
                bitfield_end = unit_end;
            } else {
                bitfield_end = bitfield_end.max(unit_end);
            }
        } else {
            in_bitfield = false;
            let seen_bytes = last_seen.div_ceil(8);
            if m.offset > seen_bytes {
                byte_hole_at = seen_bytes;
                byte_hole = m.offset - seen_bytes;
            }
        }
        if bit_hole > 0 {
            layout.bit_holes.push(BitHole {
                offset: bit_hole_at / 8,
                bit_offset: bit_hole_at % 8,
                bits: bit_hole,
            });
        }
        if byte_hole > 0 {
            layout.holes.push(Hole {
                offset: byte_hole_at,
                size: byte_hole,
            });
        }
        last_seen = last_seen.max(bit_end);
    }
    let end = base.saturating_add(layout.size).saturating_mul(8);
    layout.bit_padding = 0;
    if in_bitfield {
        let last_bit = end.min(bitfield_end);
        layout.bit_padding = last_bit.saturating_sub(last_seen);
        last_seen = last_seen.max(last_bit);
    }
    layout.padding = (end / 8).saturating_sub(last_seen / 8);
}

/// Sets each member's `hole` and `bit_hole` (the gap after it) and the layout's
/// `pre_hole`/`pre_bit_hole`, attributed member by member the way pahole 1.24 does
/// (its counters are 16 and 8 bits wide; the listing must print what it prints).
/// Unions have none. Returns how many byte holes and bit holes pahole counts (a byte
/// hole is counted when positive, a bit hole when non-zero; before the narrowing).
// Wrapping arithmetic, as pahole's C ints: a corrupt input cannot overflow-panic.
pub fn attribute(layout: &mut StructLayout<'_>, base: u64) -> HoleCounts {
    let mut counts = HoleCounts::default();
    layout.pre_hole = 0;
    layout.pre_bit_hole = 0;
    for m in &mut layout.members {
        m.hole = 0;
        m.bit_hole = 0;
    }
    if layout.kind == AggregateKind::Union {
        return counts;
    }
    let base_bits = base.saturating_mul(8) as i64;
    let mut cur_end = layout.size.saturating_mul(8) as i64;
    let mut cur_size = 0i64;
    let mut last_seen = 0i64;
    let mut in_bitfield = false;
    let mut last: Option<usize> = None;
    for k in 0..layout.members.len() {
        let m = &layout.members[k];
        let off = m.offset.saturating_sub(base) as i64;
        let bit_start = (m.start_bit() as i64).wrapping_sub(base_bits);
        let bit_end = (m.end_bit() as i64).wrapping_sub(base_bits);
        let mut bit_holes = 0i64;
        let mut byte_holes = 0i64;
        if in_bitfield {
            let end = bit_start.min(cur_end);
            bit_holes = end.wrapping_sub(last_seen);
            last_seen = end;
        }
        if m.is_bitfield() {
            let aligned = off.wrapping_mul(8);
            if last_seen < aligned && aligned <= bit_start {
                byte_holes = off.wrapping_sub(last_seen / 8);
                last_seen = aligned;
            }
            bit_holes = bit_holes.wrapping_add(bit_start.wrapping_sub(last_seen));
        } else {
            byte_holes = (bit_start / 8).wrapping_sub(last_seen / 8);
        }
        last_seen = bit_end;
        if m.is_bitfield() {
            in_bitfield = true;
            let unit = (m.size as i64).wrapping_mul(8);
            if bit_end > cur_end || unit > cur_size {
                cur_size = unit;
                cur_end = off.wrapping_mul(8).wrapping_add(cur_size);
                if bit_end > cur_end {
                    cur_end = cur_end.wrapping_add(cur_size);
                }
            }
        } else {
            in_bitfield = false;
            cur_size = 0;
            cur_end = bit_end;
        }
        if byte_holes > 0 {
            counts.holes += 1;
        }
        if bit_holes != 0 {
            counts.bit_holes += 1;
        }
        // pahole keeps these in u16 / u8 fields.
        let (hole, bit_hole) = (u32::from(byte_holes as u16), u32::from(bit_holes as u8));
        match last {
            Some(l) => {
                layout.members[l].hole = hole;
                layout.members[l].bit_hole = bit_hole;
            }
            None => {
                layout.pre_hole = u64::from(hole);
                layout.pre_bit_hole = u64::from(bit_hole);
            }
        }
        last = Some(k);
    }
    counts
}

/// Number of byte holes and bit holes of one struct level, as pahole counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HoleCounts {
    /// Byte holes.
    pub holes: u32,
    /// Bit holes.
    pub bit_holes: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Member;

    fn m(offset: u64, size: u64, bits: Option<(u32, u32)>) -> Member<'static> {
        Member {
            name: Some("m"),
            offset,
            size,
            bit_offset: bits.map(|b| b.0),
            bit_size: bits.map(|b| b.1),
            flexible: false,
            nested: None,
            ..Member::default()
        }
    }

    fn filled(size: u64, members: Vec<Member<'static>>) -> StructLayout<'static> {
        let mut l = StructLayout {
            name: "s",
            kind: AggregateKind::Struct,
            decl_file: None,
            size,
            alignment: 8,
            explicit_alignment: None,
            members,
            holes: vec![],
            bit_holes: vec![],
            padding: 0,
            bit_padding: 0,
            ..StructLayout::default()
        };
        fill(&mut l, 0);
        attribute(&mut l, 0);
        l
    }

    #[test]
    fn holes_are_counted_as_pahole_counts_them() {
        // A byte hole before a bitfield run, a bit hole inside it, a byte hole after.
        let mut l = filled(
            24,
            vec![
                m(0, 2, None),
                m(4, 4, Some((0, 3))),
                m(4, 4, Some((8, 1))),
                m(16, 8, None),
            ],
        );
        assert_eq!(
            attribute(&mut l, 0),
            HoleCounts {
                holes: 2,
                bit_holes: 2
            }
        );
        assert_eq!(
            l.members
                .iter()
                .map(|m| (m.hole, m.bit_hole))
                .collect::<Vec<_>>(),
            vec![(2, 0), (0, 5), (8, 23), (0, 0)]
        );
        let mut u = filled(8, vec![m(0, 8, None), m(0, 4, None)]);
        u.kind = AggregateKind::Union;
        assert_eq!(attribute(&mut u, 0), HoleCounts::default());
    }

    #[test]
    fn bit_hole_then_byte_hole_after_a_bitfield_run() {
        // task_struct: in_thrashing:1 at 2344:13 (4-byte unit), then a u64 at 2352.
        let l = filled(
            2360,
            vec![
                m(0, 2344, None),
                m(2344, 4, Some((0, 13))),
                m(2344, 4, Some((13, 1))),
                m(2352, 8, None),
            ],
        );
        assert_eq!(
            l.bit_holes,
            vec![BitHole {
                offset: 2345,
                bit_offset: 6,
                bits: 18
            }]
        );
        assert_eq!(
            l.holes,
            vec![Hole {
                offset: 2348,
                size: 4
            }]
        );
        assert_eq!((l.padding, l.bit_padding), (0, 0));
    }

    #[test]
    fn widest_unit_of_a_run_bounds_the_bit_hole() {
        // dev_pm_info: bool x:1 at 72:0..3 (1-byte units), unsigned int y:1 at 72:4.
        let l = filled(
            88,
            vec![
                m(0, 72, None),
                m(72, 1, Some((0, 1))),
                m(72, 4, Some((4, 1))),
                m(80, 8, None),
            ],
        );
        assert_eq!(
            l.bit_holes.iter().map(|h| h.bits).collect::<Vec<_>>(),
            vec![3, 27]
        );
        assert_eq!(
            l.holes,
            vec![Hole {
                offset: 76,
                size: 4
            }]
        );
    }

    #[test]
    fn bit_padding_is_clipped_to_the_struct() {
        // orc_entry (packed, 6 bytes): last bitfield end:1 at 4:10 in a 4-byte unit.
        let l = filled(
            6,
            vec![m(0, 2, None), m(2, 2, None), m(4, 4, Some((10, 1)))],
        );
        assert_eq!((l.padding, l.bit_padding), (0, 5));
    }

    #[test]
    fn tail_padding_and_flexible_array_hole() {
        let l = filled(16, vec![m(0, 8, None), m(8, 4, None)]);
        assert_eq!((l.padding, l.holes.len()), (4, 0));
        let mut flex = m(16, 0, None);
        flex.flexible = true;
        let l = filled(16, vec![m(0, 8, None), m(8, 2, None), flex]);
        assert_eq!(
            l.holes,
            vec![Hole {
                offset: 10,
                size: 6
            }]
        );
        assert_eq!(l.padding, 0);
    }
}
