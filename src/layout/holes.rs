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
        layout.padding = (base + layout.size).saturating_sub(end);
        layout.bit_padding = 0;
        return;
    }
    let mut last_seen = base * 8;
    let mut in_bitfield = false;
    let mut bitfield_end = 0u64;
    for m in &layout.members {
        let bit_start = m.start_bit();
        let bit_end = m.end_bit();
        let mut bit_hole = 0;
        let mut byte_hole = 0;
        let mut hole_at = last_seen;
        if in_bitfield {
            let end = bit_start.min(bitfield_end);
            if end > last_seen {
                bit_hole = end - last_seen;
                last_seen = end;
            }
        }
        if m.is_bitfield() {
            let aligned_start = m.offset * 8;
            if last_seen < aligned_start && aligned_start <= bit_start {
                hole_at = last_seen.div_ceil(8) * 8;
                byte_hole = m.offset.saturating_sub(last_seen.div_ceil(8));
                last_seen = aligned_start;
            }
            if bit_start > last_seen {
                bit_hole += bit_start - last_seen;
            }
            if !in_bitfield || bit_start >= bitfield_end {
                in_bitfield = true;
                bitfield_end = aligned_start + m.size * 8;
            }
        } else {
            in_bitfield = false;
            let seen_bytes = last_seen.div_ceil(8);
            if m.offset > seen_bytes {
                hole_at = seen_bytes * 8;
                byte_hole = m.offset - seen_bytes;
            }
        }
        if bit_hole > 0 {
            layout.bit_holes.push(BitHole {
                offset: hole_at / 8,
                bit_offset: hole_at % 8,
                bits: bit_hole,
            });
        }
        if byte_hole > 0 {
            layout.holes.push(Hole {
                offset: hole_at / 8,
                size: byte_hole,
            });
        }
        last_seen = last_seen.max(bit_end);
    }
    layout.bit_padding = 0;
    if in_bitfield && bitfield_end > last_seen {
        layout.bit_padding = bitfield_end - last_seen;
        last_seen = bitfield_end;
    }
    if !last_seen.is_multiple_of(8) {
        layout.bit_padding += 8 - last_seen % 8;
    }
    layout.padding = (base + layout.size).saturating_sub(last_seen.div_ceil(8));
}
