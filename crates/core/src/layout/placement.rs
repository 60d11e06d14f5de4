//! Placement of an object on cache lines (and 128-byte adjacent-line pairs), and the
//! index that finds the other objects sharing its lines.

use serde::Serialize;

use crate::model::{Space, Symbol, SymbolKind};

/// Where `[start, start + size)` falls on lines of `line_size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// The number of the line its first byte is on (its start divided by the line size).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub first_line: u64,
    /// The number of the line its last byte is on.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub last_line: u64,
    /// Number of lines touched.
    pub lines: u64,
    /// Offset of its start within its first line.
    pub offset_in_line: u64,
    /// Offset within the aligned pair of lines the adjacent-line prefetcher fetches.
    pub offset_in_pair: u64,
    /// Crosses at least one line boundary although it would fit in one line.
    pub straddles: bool,
    /// Starts exactly on a line boundary.
    pub line_aligned: bool,
}

/// Places an object of `size` bytes (at least one byte) at `start`.
///
/// ```
/// // root_user in Debian's 6.1.170 cloud vmlinux: 136 bytes at ...be0.
/// let p = layout_diff_core::layout::place(0xffff_ffff_82a5_1be0, 136, 64);
/// assert_eq!((p.offset_in_line, p.offset_in_pair, p.lines), (0x20, 0x60, 3));
/// assert!(!p.straddles && !p.line_aligned);
/// ```
pub fn place(start: u64, size: u64, line_size: u64) -> Placement {
    let size = size.max(1);
    let first_line = start / line_size;
    let last_line = start.saturating_add(size - 1) / line_size;
    let lines = last_line - first_line + 1;
    let min_lines = size.div_ceil(line_size);
    Placement {
        first_line,
        last_line,
        lines,
        offset_in_line: start % line_size,
        offset_in_pair: start % (2 * line_size),
        straddles: lines > min_lines,
        line_aligned: start.is_multiple_of(line_size),
    }
}

/// The objects found on one line.
#[derive(Debug, Clone, Serialize)]
pub struct LineTenants<'a, 'd> {
    /// The line's number (hex above 2^53).
    #[serde(serialize_with = "crate::model::hex::big")]
    pub line: u64,
    /// Start of the line in the space (address, or per-CPU offset).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub start: u64,
    /// The symbols on the line, in place order.
    pub symbols: Vec<&'a Symbol<'d>>,
}

/// Symbols of one space sorted by place, answering "what overlaps this range".
#[derive(Clone)]
pub struct SpaceIndex<'a, 'd> {
    symbols: Vec<&'a Symbol<'d>>,
    /// `places[i]`: where `symbols[i]` starts (searched without touching the symbols).
    places: Vec<u64>,
    /// `max_end[i]`: the largest end among `symbols[..=i]`.
    max_end: Vec<u64>,
}

impl<'a, 'd> SpaceIndex<'a, 'd> {
    /// Index of the symbols in `space` that `keep` accepts.
    pub fn new(
        symbols: &'a [Symbol<'d>],
        space: Space,
        keep: impl Fn(&Symbol<'d>) -> bool,
    ) -> Self {
        let mut chosen: Vec<&'a Symbol<'d>> = symbols
            .iter()
            .filter(|s| s.space == space && keep(s))
            .collect();
        chosen.sort_by(|a, b| (a.place, a.name).cmp(&(b.place, b.name)));
        let mut max_end = Vec::with_capacity(chosen.len());
        let mut m = 0;
        for s in &chosen {
            m = m.max(s.place_end());
            max_end.push(m);
        }
        SpaceIndex {
            places: chosen.iter().map(|s| s.place).collect(),
            symbols: chosen,
            max_end,
        }
    }

    /// Data objects only (what can share a line with data).
    pub fn data(symbols: &'a [Symbol<'d>], space: Space) -> Self {
        Self::new(symbols, space, |s| s.kind != SymbolKind::Function)
    }

    /// Data objects that hold bytes: the tenants a line of data can have. A zero-byte
    /// symbol (lockdep's `__key.N`, an empty `struct lock_class_key` without
    /// CONFIG_LOCKDEP) only names the address of the object after it; it is never a
    /// tenant, as in the diff's judgement.
    pub fn tenants(symbols: &'a [Symbol<'d>], space: Space) -> Self {
        Self::new(symbols, space, is_tenant)
    }

    /// Symbols overlapping `[lo, hi)`, in place order.
    pub fn overlapping(&self, lo: u64, hi: u64) -> Vec<&'a Symbol<'d>> {
        self.overlapping_iter(lo, hi).collect()
    }

    /// `overlapping` without collecting (for callers that filter further).
    pub fn overlapping_iter(&self, lo: u64, hi: u64) -> impl Iterator<Item = &'a Symbol<'d>> {
        let mut from = self.places.len() / 2;
        self.overlapping_near(&mut from, lo, hi)
    }

    /// `overlapping_iter`, searched from `*near` (an index where the range is expected
    /// to end, e.g. where the last search ended) and leaving there where this one
    /// ended: a caller that asks in rising order finds each range a few entries on, in
    /// cache, instead of halving the whole index twice.
    pub fn overlapping_near<'s>(
        &'s self,
        near: &mut usize,
        lo: u64,
        hi: u64,
    ) -> impl Iterator<Item = &'a Symbol<'d>> + use<'s, 'a, 'd> {
        let after = partition_point_near(&self.places, *near, |&p| p < hi);
        *near = after;
        // Back to the first symbol whose prefix maximum end reaches into the range
        // (`max_end` never decreases, so that is a search too).
        let first = partition_point_near(&self.max_end[..after], after, |&end| end <= lo);
        self.symbols[first..after]
            .iter()
            .copied()
            .filter(move |s| s.place_end() > lo)
    }

    /// The other symbols on the lines `sym` occupies: an entry for its first and last
    /// line (even when empty), and for every line in between where another symbol
    /// starts or ends. Bounded by the number of neighbours, never by the object's size.
    pub fn co_tenants(&self, sym: &Symbol<'d>, line_size: u64) -> Vec<LineTenants<'a, 'd>> {
        let p = place(sym.place, sym.size, line_size);
        let lo = p.first_line * line_size;
        let hi = p.last_line.saturating_add(1).saturating_mul(line_size);
        let others: Vec<&'a Symbol<'d>> = self
            .overlapping(lo, hi)
            .into_iter()
            .filter(|s| !same_symbol(s, sym))
            .collect();
        let mut lines = vec![p.first_line, p.last_line];
        for o in &others {
            let first = (o.place / line_size).max(p.first_line);
            let last = ((o.place_end() - 1) / line_size).min(p.last_line);
            lines.extend([first, last]);
        }
        lines.sort_unstable();
        lines.dedup();
        // Between two listed lines, a run of lines with no other object is one entry
        // (its first line): every line is accounted for, however large the object.
        let gaps: Vec<u64> = lines
            .windows(2)
            .filter(|w| w[1] - w[0] > 1)
            .map(|w| w[0] + 1)
            .collect();
        lines.extend(gaps);
        lines.sort_unstable();
        lines
            .into_iter()
            .map(|line| {
                let start = line * line_size;
                let end = start.saturating_add(line_size);
                LineTenants {
                    line,
                    start,
                    symbols: others
                        .iter()
                        .copied()
                        .filter(|s| s.place < end && s.place_end() > start)
                        .collect(),
                }
            })
            .collect()
    }
}

/// `v.partition_point(pred)` (`pred` true on a prefix of `v`) found by galloping out
/// from `near`, then halving: O(log d) probes for an answer `d` entries from `near`.
fn partition_point_near<T>(v: &[T], near: usize, pred: impl Fn(&T) -> bool) -> usize {
    let near = near.min(v.len());
    // The answer lies in [lo, hi]: `pred` holds before `lo` and fails from `hi` on.
    let (mut lo, mut hi);
    let mut step = 1;
    if near < v.len() && pred(&v[near]) {
        (lo, hi) = (near + 1, v.len());
        while let Some(probe) = near.checked_add(step).filter(|&p| p < v.len()) {
            if !pred(&v[probe]) {
                hi = probe;
                break;
            }
            lo = probe + 1;
            step *= 2;
        }
    } else {
        (lo, hi) = (0, near);
        while let Some(probe) = near.checked_sub(step) {
            if pred(&v[probe]) {
                lo = probe + 1;
                break;
            }
            hi = probe;
            step *= 2;
        }
    }
    lo + v[lo..hi].partition_point(pred)
}

/// Whether `s` can be a tenant of a line of data: a data object of at least one byte
/// (`SpaceIndex::tenants`).
fn is_tenant(s: &Symbol<'_>) -> bool {
    s.kind != SymbolKind::Function && s.size > 0
}

fn same_symbol(a: &Symbol<'_>, b: &Symbol<'_>) -> bool {
    a.place == b.place && a.name == b.name && a.file == b.file && a.space == b.space
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &'static str, place: u64, size: u64) -> Symbol<'static> {
        Symbol::test_object(name, place, size)
    }

    #[test]
    fn place_root_user_like_object() {
        // 136 bytes at ...be0: offset 0x20 in its line, 0x60 in its pair, 3 lines.
        let p = place(0xffff_ffff_82a5_1be0, 136, 64);
        assert_eq!(p.offset_in_line, 0x20);
        assert_eq!(p.offset_in_pair, 0x60);
        assert_eq!(p.lines, 3);
        assert_eq!(p.last_line - p.first_line, 2);
        assert!(!p.straddles);
        assert!(!p.line_aligned);
    }

    #[test]
    fn straddling_small_object() {
        let p = place(60, 8, 64);
        assert_eq!((p.first_line, p.last_line, p.lines), (0, 1, 2));
        assert!(p.straddles);
        let q = place(128, 0, 64);
        assert_eq!((q.first_line, q.lines, q.line_aligned), (2, 1, true));
    }

    /// A 3-line object alone on its middle line lists it too: lines 0, 1 (none), 2.
    #[test]
    fn co_tenants_list_the_middle_lines_as_runs() {
        let syms = vec![sym("a", 0, 8), sym("big", 8, 160), sym("b", 168, 8)];
        let idx = SpaceIndex::data(&syms, Space::Global);
        let got: Vec<(u64, Vec<&str>)> = idx
            .co_tenants(&syms[1], 64)
            .iter()
            .map(|l| (l.line, l.symbols.iter().map(|s| s.name).collect()))
            .collect();
        assert_eq!(got, vec![(0, vec!["a"]), (1, vec![]), (2, vec!["b"])]);
        let wide = vec![sym("w", 0, 64 * 10)];
        let idx = SpaceIndex::data(&wide, Space::Global);
        let got: Vec<u64> = idx
            .co_tenants(&wide[0], 64)
            .iter()
            .map(|l| l.line)
            .collect();
        assert_eq!(got, vec![0, 1, 9]);
    }

    #[test]
    fn co_tenants_include_large_earlier_objects() {
        let syms = vec![
            sym("big", 0, 256),
            sym("a", 64, 8),
            sym("b", 72, 8),
            sym("c", 300, 4),
        ];
        let idx = SpaceIndex::data(&syms, Space::Global);
        let lines = idx.co_tenants(&syms[1], 64);
        assert_eq!(lines.len(), 1);
        let names: Vec<&str> = lines[0].symbols.iter().map(|s| s.name).collect();
        assert_eq!(names, vec!["big", "b"]);
        let on_c: Vec<&str> = idx.overlapping(256, 320).iter().map(|s| s.name).collect();
        assert_eq!(on_c, vec!["c"]);
    }

    /// The search from a guess gives `partition_point`'s answer for every guess.
    #[test]
    fn partition_point_near_agrees_with_partition_point() {
        let v = [1u64, 3, 3, 5, 8, 8, 8, 13, 21];
        for limit in 0..23 {
            let want = v.partition_point(|&x| x < limit);
            for near in 0..v.len() + 3 {
                let got = partition_point_near(&v, near, |&x| x < limit);
                assert_eq!(got, want, "limit {limit}, near {near}");
            }
        }
        assert_eq!(partition_point_near(&[] as &[u64], 5, |&x| x < 1), 0);
    }

    #[test]
    fn co_tenants_of_a_huge_object_are_bounded_by_its_neighbours() {
        // A corrupt symbol size must not make us walk billions of lines.
        let syms = vec![sym("huge", 0, u64::MAX / 2), sym("a", 4096, 8)];
        let idx = SpaceIndex::data(&syms, Space::Global);
        let lines = idx.co_tenants(&syms[0], 64);
        let summary: Vec<(u64, Vec<&str>)> = lines
            .iter()
            .map(|l| (l.line, l.symbols.iter().map(|s| s.name).collect()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (0, vec![]),
                (1, vec![]),
                (64, vec!["a"]),
                (65, vec![]),
                ((u64::MAX / 2 - 1) / 64, vec![])
            ]
        );
    }
}
