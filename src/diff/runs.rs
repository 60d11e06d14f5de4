//! Shift runs: neighbouring symbols (old address order, one section) that moved by the
//! same delta are one run, reported once with the change that started it.

use std::collections::HashMap;

use super::changes::{Cause, Pair, Severity, ShiftRun};
use super::pairing::{Paired, Pairing};
use crate::model::{Space, Symbol, SymbolKind};

/// Identifies a symbol of the old build: (space, place, name).
pub type OldId<'d> = (Space, u64, &'d str);

pub fn old_id<'d>(s: &Symbol<'d>) -> OldId<'d> {
    (s.space, s.place, s.name)
}

/// The runs of every section, and the run each moved symbol belongs to.
/// `alignment(new symbol)` gives the explicit alignment the new build asks of a symbol.
pub fn find<'a, 'd>(
    pairing: &Pairing<'a, 'd>,
    line_size: u64,
    alignment: &dyn Fn(&Symbol<'d>) -> Option<u64>,
) -> (Vec<ShiftRun>, HashMap<OldId<'d>, usize>) {
    let mut runs = Vec::new();
    let mut member_of = HashMap::new();
    let same_section: Vec<&Paired<'a, 'd>> = pairing
        .pairs
        .iter()
        .filter(|p| p.old.section == p.new.section)
        .collect();
    let mut start = 0;
    while start < same_section.len() {
        let section = (
            same_section[start].old.space,
            same_section[start].old.section,
        );
        let mut end = start;
        while end < same_section.len()
            && (same_section[end].old.space, same_section[end].old.section) == section
        {
            end += 1;
        }
        runs_in_section(
            &same_section[start..end],
            pairing,
            line_size,
            alignment,
            &mut runs,
            &mut member_of,
        );
        start = end;
    }
    (runs, member_of)
}

fn runs_in_section<'a, 'd>(
    list: &[&Paired<'a, 'd>],
    pairing: &Pairing<'a, 'd>,
    line_size: u64,
    alignment: &dyn Fn(&Symbol<'d>) -> Option<u64>,
    runs: &mut Vec<ShiftRun>,
    member_of: &mut HashMap<OldId<'d>, usize>,
) {
    let mut i = 0;
    while i < list.len() {
        let delta = list[i].delta();
        let mut j = i + 1;
        while j < list.len() && list[j].delta() == delta {
            j += 1;
        }
        if delta != 0 {
            let first = list[i];
            let last = list[j - 1];
            let prev = (i > 0).then(|| list[i - 1]);
            let whole_lines = delta.unsigned_abs().is_multiple_of(line_size);
            let functions = first.old.kind == SymbolKind::Function;
            let index = runs.len();
            for p in &list[i..j] {
                member_of.insert(old_id(p.old), index);
            }
            runs.push(ShiftRun {
                space: first.old.space,
                section: first.old.section.to_string(),
                first: first.old.qualified_name(),
                last: last.old.qualified_name(),
                count: j - i,
                start: Pair {
                    old: first.old.place,
                    new: first.new.place,
                },
                end: Pair {
                    old: last.old.place_end(),
                    new: last.new.place_end(),
                },
                delta,
                whole_lines,
                functions,
                cause: cause(prev, first, pairing, alignment),
                severity: match (whole_lines, functions) {
                    (true, _) => Severity::Info,
                    (false, true) => Severity::Text,
                    (false, false) => Severity::ShiftRun,
                },
            });
        }
        i = j;
    }
}

/// Symbols of `list` (sorted by place) in `section` of `space` with place in `[lo, hi)`.
fn between<'a, 'd>(
    list: &[&'a Symbol<'d>],
    space: Space,
    section: &str,
    lo: u64,
    hi: u64,
) -> Vec<&'a Symbol<'d>> {
    let from = list.partition_point(|s| (s.space, s.place) < (space, lo));
    list[from..]
        .iter()
        .take_while(|s| (s.space, s.place) < (space, hi))
        .filter(|s| s.section == section)
        .copied()
        .collect()
}

fn cause<'a, 'd>(
    prev: Option<&Paired<'a, 'd>>,
    first: &Paired<'a, 'd>,
    pairing: &Pairing<'a, 'd>,
    alignment: &dyn Fn(&Symbol<'d>) -> Option<u64>,
) -> Cause {
    if let Some(p) = prev
        && p.old.size != p.new.size
    {
        return Cause::Resized {
            symbol: p.old.qualified_name(),
            old: p.old.size,
            new: p.new.size,
        };
    }
    let space = first.old.space;
    let section = first.old.section;
    let new_lo = prev.map_or(0, |p| p.new.place + 1);
    let added = between(&pairing.added, space, section, new_lo, first.new.place);
    if !added.is_empty() {
        return Cause::Added {
            symbols: added.iter().map(|s| s.qualified_name()).collect(),
            bytes: added.iter().map(|s| s.size).sum(),
        };
    }
    let old_lo = prev.map_or(0, |p| p.old.place + 1);
    let removed = between(&pairing.removed, space, section, old_lo, first.old.place);
    if !removed.is_empty() {
        return Cause::Removed {
            symbols: removed.iter().map(|s| s.qualified_name()).collect(),
            bytes: removed.iter().map(|s| s.size).sum(),
        };
    }
    if let Some(a) = alignment(first.new).filter(|&a| a > 1)
        && first.new.place.is_multiple_of(a)
        && !first.old.place.is_multiple_of(a)
    {
        return Cause::Realigned {
            symbol: first.new.qualified_name(),
            alignment: a,
        };
    }
    Cause::Padding {
        previous: prev.map(|p| p.old.qualified_name()),
    }
}
