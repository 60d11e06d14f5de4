//! Root causes: every data shift run is filed under the one change that started it
//! (the largest item of its cause: an object resized, added or removed, a realignment,
//! or alignment padding), and a resized object whose struct type changed size is filed
//! under the struct. One root change is one line of the report with counts of what it
//! moved across lines and how many of those are hot, however many runs it started.

use rustc_hash::{FxHashMap, FxHashSet};

use super::changes::{
    Cause, CauseItem, ItemKind, MemberChangeKind, PlacementChange, Root, RootCause, ShiftRun,
    StructChange,
};
use crate::model::{Image, Space, SymbolKind, TypeKind};

/// The item of a cause that stands for it: the largest in bytes (a realignment when
/// nothing has bytes).
fn main_item(c: &Cause) -> Option<&CauseItem> {
    let items = match c {
        Cause::Changes { items, .. }
        | Cause::Reordered { items, .. }
        | Cause::Unexplained { items, .. } => items,
        Cause::Padding { .. } => return None,
    };
    items
        .iter()
        .filter(|i| !matches!(i.change, ItemKind::Prefix | ItemKind::Padding))
        .max_by(|a, b| {
            (a.bytes.unsigned_abs(), std::cmp::Reverse(&a.symbol))
                .cmp(&(b.bytes.unsigned_abs(), std::cmp::Reverse(&b.symbol)))
        })
}

/// The root of one run, with the struct behind a resized object when its type grew.
fn root_of(run: &ShiftRun, grown: &FxHashMap<String, (String, i64)>) -> Root {
    let Some(i) = main_item(&run.cause) else {
        return match run.cause {
            Cause::Padding { alignment, .. } => Root::Padding {
                before: run.first.clone(),
                alignment,
            },
            _ => Root::Unexplained {
                before: run.first.clone(),
            },
        };
    };
    let symbol = i.symbol.clone();
    match i.change {
        ItemKind::Resized
        | ItemKind::MovedIn
        | ItemKind::MovedOut
        | ItemKind::Prefix
        | ItemKind::Padding => match grown.get(&symbol) {
            Some((name, bytes)) => Root::Struct {
                name: name.clone(),
                bytes: *bytes,
            },
            None => Root::Resized {
                symbol,
                bytes: i.bytes,
            },
        },
        ItemKind::Added => Root::Added {
            symbol,
            bytes: i.bytes,
        },
        ItemKind::Removed => Root::Removed {
            symbol,
            bytes: -i.bytes,
        },
        // Both runs it leaves and joins name the same root.
        ItemKind::SectionIn | ItemKind::SectionOut => {
            let sections = i.sections.clone().unwrap_or_default();
            Root::Moved {
                symbol,
                from: sections.old,
                to: sections.new,
                size: i.size,
            }
        }
        ItemKind::Realigned => Root::Realigned { symbol },
    }
}

/// Resized objects (by the qualified name the causes use) whose struct type changed
/// size between the builds, with the struct's name and growth.
fn grown_types(
    runs: &[ShiftRun],
    new: &Image<'_>,
    structs: &[StructChange],
) -> FxHashMap<String, (String, i64)> {
    let grew: FxHashMap<&str, i64> = structs
        .iter()
        .filter(|s| s.size.changed())
        .map(|s| (s.name.as_str(), s.size.new as i64 - s.size.old as i64))
        .collect();
    let wanted: FxHashSet<&str> = runs
        .iter()
        .filter_map(|r| main_item(&r.cause))
        .filter(|i| i.change == ItemKind::Resized)
        .map(|i| i.symbol.rsplit(':').next().unwrap_or(&i.symbol))
        .collect();
    let mut out = FxHashMap::default();
    if grew.is_empty() || wanted.is_empty() {
        return out;
    }
    // A struct that grew only through a struct it embeds is filed under that one.
    let through: FxHashMap<&str, &str> = structs
        .iter()
        .filter(|s| s.size.changed())
        .filter_map(|s| Some((s.name.as_str(), grown_through(s, new, &grew)?)))
        .collect();
    let root = |name: &str| -> (String, i64) {
        let mut at = name;
        for _ in 0..16 {
            match through.get(at) {
                Some(&inner) if inner != name => at = inner,
                _ => break,
            }
        }
        (at.to_string(), grew.get(at).copied().unwrap_or(0))
    };
    let vars = new.variables_by_address();
    for s in new
        .symbols
        .iter()
        .filter(|s| s.kind != SymbolKind::Function && wanted.contains(s.name))
    {
        let Some(name) = vars.of(s).and_then(|v| new.struct_name(v)) else {
            continue;
        };
        if grew.contains_key(name) {
            out.insert(s.qualified_name(), root(name));
        }
    }
    out
}

/// The struct that `s` grew through: when every member of `s` that changed size is
/// a struct (or an array of them, by value) that grew too, and none was added,
/// removed or retyped, the first such member's type. `s` is then a consequence.
fn grown_through<'a>(
    s: &StructChange,
    new: &'a Image<'_>,
    grew: &FxHashMap<&str, i64>,
) -> Option<&'a str> {
    let layout = new
        .structs
        .iter()
        .find(|l| l.name == s.name && l.size == s.size.new)?;
    let members = super::structs::leaves(layout);
    let mut found = None;
    for m in &s.members {
        if m.kinds.iter().any(|k| {
            matches!(
                k,
                MemberChangeKind::Added | MemberChangeKind::Removed | MemberChangeKind::Retyped
            )
        }) {
            return None;
        }
        if !m.kinds.contains(&MemberChangeKind::Resized) {
            continue;
        }
        let member: &'a crate::model::Member<'_> = members
            .iter()
            .find(|x| x.name == Some(m.name.as_str()))
            .copied()?;
        let t = &member.ctype;
        let by_value = matches!(t.kind, TypeKind::Struct | TypeKind::Union)
            || (t.kind == TypeKind::Array
                && matches!(t.element, TypeKind::Struct | TypeKind::Union));
        let inner = t.aggregate.as_deref().filter(|_| by_value)?;
        if inner == s.name || !grew.contains_key(inner) {
            return None;
        }
        found = found.or(Some(inner));
    }
    found
}

/// A run's old start, old end and index.
type Span = (u64, u64, usize);

/// For each run, the data run holding the symbol its shift is measured from (its
/// base), when that symbol moved too.
fn upstream_runs(runs: &[ShiftRun]) -> Vec<Option<usize>> {
    let mut by_section: FxHashMap<(Space, &str), Vec<Span>> = FxHashMap::default();
    for (i, r) in runs.iter().enumerate().filter(|(_, r)| !r.functions) {
        by_section
            .entry((r.space, r.section.as_str()))
            .or_default()
            .push((r.start.old, r.end.old, i));
    }
    for v in by_section.values_mut() {
        v.sort_unstable();
    }
    runs.iter()
        .map(|r| {
            if r.functions || r.previous_delta == 0 {
                return None;
            }
            let list = by_section.get(&(r.space, r.section.as_str()))?;
            let k = list.partition_point(|&(start, _, _)| start <= r.base.old);
            let &(start, end, i) = list.get(k.checked_sub(1)?)?;
            (start <= r.base.old && r.base.old < end.max(start + 1)).then_some(i)
        })
        .collect()
}

/// Files every data run under its root change; returns the roots, most hot objects
/// first, and sets each run's `root`.
pub fn find(
    runs: &mut [ShiftRun],
    changes: [&[Box<PlacementChange<'_>>]; 2],
    new: &Image<'_>,
    structs: &[StructChange],
) -> Vec<RootCause> {
    let grown = grown_types(runs, new, structs);
    let mut hot_by_run = hot_by_run(changes);
    let direct: Vec<Option<Root>> = runs
        .iter()
        .map(|r| (!r.functions).then(|| root_of(r, &grown)))
        .collect();
    let upstream = upstream_runs(runs);
    let mut roots: Vec<RootCause> = Vec::new();
    let mut index: FxHashMap<Root, usize> = FxHashMap::default();
    for (i, run) in runs.iter_mut().enumerate() {
        let Some(root) = filed_under(&direct, &upstream, i) else {
            continue;
        };
        let at = *index.entry(root.clone()).or_insert_with(|| {
            roots.push(RootCause {
                what: root.to_string(),
                root,
                runs: Vec::new(),
                via: Vec::new(),
                moved: 0,
                moved_whole_lines: 0,
                hot: 0,
                hot_names: Vec::new(),
                percpu: false,
                global: false,
            });
            roots.len() - 1
        });
        run.root = Some(at);
        add_run(&mut roots[at], i, run, hot_by_run.get_mut(&i));
    }
    for r in &mut roots {
        r.hot_names.truncate(8);
        if !r.via.is_empty() {
            let more = match r.via.len() {
                n if n > 3 => format!(", +{} more", n - 3),
                _ => String::new(),
            };
            let first: Vec<&str> = r.via.iter().take(3).map(String::as_str).collect();
            r.what = format!("{} (via {}{more})", r.what, first.join(", "));
        }
    }
    sort_roots(&mut roots, runs);
    roots
}

/// Hot objects whose lines changed, by run: each one's old place and name.
fn hot_by_run(changes: [&[Box<PlacementChange<'_>>]; 2]) -> FxHashMap<usize, Vec<(u64, String)>> {
    let mut hot_by_run: FxHashMap<usize, Vec<(u64, String)>> = FxHashMap::default();
    for c in changes.iter().flat_map(|l| l.iter()) {
        if let Some(run) = c.run
            && c.is_hot()
            && c.listed_by_default()
        {
            hot_by_run
                .entry(run)
                .or_default()
                .push((c.place.old, c.name.to_string()));
        }
    }
    hot_by_run
}

/// The root run `i` is filed under (`direct`: each run's own root, none for
/// functions): a run whose only change is padding moved because the run before it
/// did, so it is filed under that run's root (followed through chains of such runs).
fn filed_under(direct: &[Option<Root>], upstream: &[Option<usize>], i: usize) -> Option<Root> {
    let mut root = direct[i].clone()?;
    let mut at = i;
    for _ in 0..64 {
        match (&root, upstream[at]) {
            (Root::Padding { .. }, Some(up)) if direct[up].is_some() => {
                at = up;
                root = direct[up].clone().unwrap_or(root);
            }
            _ => break,
        }
    }
    Some(root)
}

/// Counts run `i` into root cause `r`, with the hot objects it moved (`hot`, taken).
fn add_run(r: &mut RootCause, i: usize, run: &ShiftRun, hot: Option<&mut Vec<(u64, String)>>) {
    r.runs.push(i);
    if let (Root::Struct { .. }, Some(item)) = (&r.root, main_item(&run.cause))
        && !r.via.contains(&item.symbol)
    {
        r.via.push(item.symbol.clone());
    }
    if run.whole_lines {
        r.moved_whole_lines += run.count;
    } else {
        r.moved += run.count;
    }
    match run.space {
        Space::Percpu => r.percpu = true,
        Space::Global => r.global = true,
    }
    if let Some(hot) = hot {
        hot.sort();
        r.hot += hot.len();
        r.hot_names.extend(hot.drain(..).map(|(_, n)| n));
    }
}

/// Sorts the root causes (most hot objects, then most moved, first), and points the
/// runs at them in their new order.
fn sort_roots(roots: &mut [RootCause], runs: &mut [ShiftRun]) {
    roots.sort_by(|a, b| {
        (
            std::cmp::Reverse(a.hot),
            std::cmp::Reverse(a.moved),
            &a.root,
        )
            .cmp(&(
                std::cmp::Reverse(b.hot),
                std::cmp::Reverse(b.moved),
                &b.root,
            ))
    });
    // Runs point at roots by their new order.
    let order: FxHashMap<usize, usize> = roots
        .iter()
        .enumerate()
        .flat_map(|(new_at, r)| r.runs.iter().map(move |&run| (run, new_at)))
        .collect();
    for (i, run) in runs.iter_mut().enumerate() {
        run.root = order.get(&i).copied();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::changes::{Pair, Severity};

    fn run(cause: Cause, count: usize, whole: bool) -> ShiftRun {
        ShiftRun {
            space: Space::Global,
            section: ".data".into(),
            first: "a".into(),
            last: "b".into(),
            count,
            start: Pair { old: 0, new: 0 },
            end: Pair { old: 0, new: 0 },
            delta: 8,
            base: Pair { old: 0, new: 0 },
            previous_delta: 0,
            whole_lines: whole,
            functions: false,
            cause,
            severity: Severity::ShiftRun,
            root: None,
        }
    }

    fn changes(symbol: &str, kind: ItemKind, old: u64, new: u64) -> Cause {
        Cause::Changes {
            previous: None,
            items: vec![
                CauseItem {
                    symbol: "small".into(),
                    change: ItemKind::Resized,
                    size: Pair { old: 8, new: 16 },
                    bytes: 8,
                    sections: None,
                },
                CauseItem {
                    symbol: symbol.into(),
                    change: kind,
                    size: Pair { old, new },
                    bytes: new as i64 - old as i64,
                    sections: None,
                },
            ],
            omitted_items: 0,
            bytes: 0,
            padding: 0,
            alignment: 8,
        }
    }

    /// Runs with one main item share one root; the largest item stands for a cause;
    /// a resized object whose type grew is filed under its struct.
    #[test]
    fn runs_are_filed_under_their_largest_change() {
        let mut runs = vec![
            run(changes("dev_a", ItemKind::Resized, 736, 744), 10, false),
            run(changes("big", ItemKind::Added, 0, 384), 58, true),
            run(changes("dev_a", ItemKind::Resized, 736, 744), 5, false),
            run(
                Cause::Padding {
                    previous: None,
                    bytes: 0,
                    padding: 16,
                    alignment: 32,
                },
                3,
                false,
            ),
        ];
        let grown: FxHashMap<String, (String, i64)> =
            [("dev_a".to_string(), ("device".to_string(), 8))]
                .into_iter()
                .collect();
        assert_eq!(
            root_of(&runs[0], &grown),
            Root::Struct {
                name: "device".into(),
                bytes: 8,
            }
        );
        assert_eq!(root_of(&runs[1], &grown).to_string(), "big added (384 B)");
        assert_eq!(
            root_of(&runs[3], &grown).to_string(),
            "alignment padding before a (align 32)"
        );
        let image = Image::test_empty();
        let roots = find(&mut runs, [&[], &[]], &image, &[]);
        // No struct changes given: dev_a is filed as itself, its two runs together.
        let what: Vec<(&str, usize, usize)> = roots
            .iter()
            .map(|r| (r.what.as_str(), r.moved, r.moved_whole_lines))
            .collect();
        assert_eq!(
            what,
            vec![
                ("dev_a +8 B", 15, 0),
                ("alignment padding before a (align 32)", 3, 0),
                ("big added (384 B)", 0, 58),
            ]
        );
        assert_eq!(
            runs.iter().map(|r| r.root).collect::<Vec<_>>(),
            vec![Some(0), Some(2), Some(0), Some(1)]
        );
    }
}
