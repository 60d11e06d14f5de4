//! Property tests (proptest) for the pure layout computations: hole finding against
//! a byte map, placement against counting lines, and the space index against a scan.

use layout_diff_core::layout::{SpaceIndex, holes, place};
use layout_diff_core::model::{Binding, Member, Space, StructLayout, Symbol, SymbolKind};
use proptest::prelude::*;

/// Non-overlapping members from (gap, size) pairs, and a struct size past them.
fn struct_of(parts: &[(u64, u64)], tail: u64) -> StructLayout<'static> {
    let mut at = 0;
    let mut members = Vec::new();
    for &(gap, size) in parts {
        at += gap;
        members.push(Member {
            name: Some("m"),
            ctype: std::sync::Arc::new(layout_diff_core::model::CType {
                c: "char".into(),
                ..Default::default()
            })
            .into(),
            offset: at,
            size,
            ..Member::default()
        });
        at += size;
    }
    StructLayout {
        name: "s",
        size: at + tail,
        members,
        ..StructLayout::default()
    }
}

proptest! {
    #[test]
    fn holes_are_the_unused_bytes(parts in prop::collection::vec((0u64..40, 1u64..40), 1..12), tail in 0u64..40) {
        let mut l = struct_of(&parts, tail);
        holes::fill(&mut l, 0);
        // Every hole is a run of bytes no member covers, and all such runs are holes.
        let mut used = vec![false; l.size as usize];
        for m in &l.members {
            for b in m.offset..m.offset + m.size {
                used[b as usize] = true;
            }
        }
        let last_end = l.members.last().map_or(0, |m| m.offset + m.size);
        let mut gaps = Vec::new();
        // A gap before the first member is a hole too (pahole's leading hole).
        let mut b = 0;
        while b < last_end {
            if !used[b as usize] {
                let start = b;
                while !used[b as usize] { b += 1; }
                gaps.push((start, b - start));
            } else {
                b += 1;
            }
        }
        let found: Vec<(u64, u64)> = l.holes.iter().map(|h| (h.offset, h.size)).collect();
        prop_assert_eq!(found, gaps);
        prop_assert_eq!(l.padding, tail);
        let members: u64 = l.members.iter().map(|m| m.size).sum();
        prop_assert_eq!(members + l.sum_holes() + l.padding, l.size);
    }

    #[test]
    fn placement_counts_lines(start in 0u64..1 << 40, size in 0u64..5000, shift in 4u32..9) {
        let line = 1u64 << shift;
        let p = place(start, size, line);
        let end = start + size.max(1) - 1;
        prop_assert_eq!(p.first_line, start / line);
        prop_assert_eq!(p.last_line, end / line);
        prop_assert_eq!(p.lines, end / line - start / line + 1);
        prop_assert_eq!(p.offset_in_line, start % line);
        prop_assert_eq!(p.offset_in_pair, start % (2 * line));
        prop_assert_eq!(p.line_aligned, start % line == 0);
        prop_assert_eq!(p.straddles, p.lines > size.max(1).div_ceil(line));
    }

    #[test]
    fn space_index_finds_what_a_scan_finds(
        objs in prop::collection::vec((0u64..2000, 0u64..300), 0..40),
        lo in 0u64..2400,
        len in 1u64..300,
    ) {
        let names: Vec<String> = (0..objs.len()).map(|i| format!("o{i}")).collect();
        let symbols: Vec<Symbol<'_>> = objs
            .iter()
            .zip(&names)
            .map(|(&(at, size), name)| Symbol {
                name,
                file: None,
                unit: None,
            compile_unit: None,
                group: 0,
                kind: SymbolKind::Object,
                binding: Binding::Global,
                section: ".data",
                address: at,
                size,
                space: Space::Global,
                place: at,
            })
            .collect();
        let index = SpaceIndex::data(&symbols, Space::Global);
        let hi = lo + len;
        let mut got: Vec<&str> = index.overlapping(lo, hi).iter().map(|s| s.name).collect();
        let mut want: Vec<&str> = symbols
            .iter()
            .filter(|s| s.place < hi && s.place_end() > lo)
            .map(|s| s.name)
            .collect();
        got.sort_unstable();
        want.sort_unstable();
        prop_assert_eq!(got, want);
    }
}
