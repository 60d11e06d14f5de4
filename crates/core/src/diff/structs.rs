//! Struct layout changes: structs paired by name (and declaring file where a name
//! has several layouts), members paired by name, lines counted from offset 0.

use rustc_hash::{FxHashMap, FxHashSet};

use super::changes::{MemberChange, MemberChangeKind, Pair, Severity, Side, StructChange};
use super::same::SameTypes;
use super::verdict;
use crate::evidence::{Declared, Evidence, Hotness, Strength};
use crate::layout::lay;
use crate::model::{Image, Member, StructId, StructLayout, Symbol, SymbolKind};

/// Pairs the structs of two builds; yields (old, new) for each name present in both,
/// by name.
fn pair<'a, 'd>(
    old: &'a Image<'d>,
    new: &'a Image<'d>,
    mixed: bool,
    types: &mut SameTypes,
) -> Vec<(Indexed<'a, 'd>, Indexed<'a, 'd>)> {
    // Each build's structs by name, those of one name in image order: two sorted lists
    // walked side by side (a map of lists per build cost a quarter of the comparison).
    // A layout's language is part of its name here: bindgen's Rust copy of a struct
    // (`--lang all`) pairs with the other build's Rust copy only.
    let by_name = |img: &'a Image<'d>| {
        let mut v: Vec<Indexed<'a, 'd>> = img
            .structs
            .iter()
            .enumerate()
            .map(|(i, s)| (StructId(i), &**s))
            .collect();
        v.sort_unstable_by(|a, b| (a.1.name, a.1.rust, a.0).cmp(&(b.1.name, b.1.rust, b.0)));
        v
    };
    let (go, gn) = (by_name(old), by_name(new));
    let key = |s: &Indexed<'a, 'd>| (s.1.name, s.1.rust);
    let mut news = gn.chunk_by(|a, b| key(a) == key(b)).peekable();
    let mut out = Vec::new();
    for olds in go.chunk_by(|a, b| key(a) == key(b)) {
        let name = olds[0].1.name;
        // Anonymous structs (types of objects like `tk_core`) have no name to pair by.
        if name.is_empty() {
            continue;
        }
        while news.next_if(|n| key(&n[0]) < key(&olds[0])).is_some() {}
        let Some(news) = news.next_if(|n| key(&n[0]) == key(&olds[0])) else {
            continue;
        };
        if olds.len() == 1 && news.len() == 1 {
            out.push((olds[0], news[0]));
            continue;
        }
        // Several layouts: an identical one on both sides is no change; pair the rest
        // by declaring file.
        for o in olds {
            if news.iter().any(|n| same(o.1, n.1, mixed, types)) {
                continue;
            }
            // BTF names no declaring file: left-over layouts cannot be paired.
            if mixed {
                continue;
            }
            if let Some(n) = news
                .iter()
                .find(|n| n.1.decl_file == o.1.decl_file && !olds.iter().any(|x| x.1 == n.1))
            {
                out.push((*o, *n));
            }
        }
    }
    out
}

/// A struct of one build with its id there.
type Indexed<'a, 'd> = (StructId, &'a StructLayout<'d>);

/// Global and per-CPU objects whose type is one of the `wanted` structs: only the
/// symbols at the address of a variable of such a type are looked up (a lookup for
/// every data object of both builds was a fifth of the struct comparison).
fn instances<'a, 'd>(
    image: &'a Image<'d>,
    wanted: &FxHashSet<StructId>,
) -> FxHashMap<StructId, Vec<&'a Symbol<'d>>> {
    let mut m: FxHashMap<StructId, Vec<&'a Symbol<'d>>> = FxHashMap::default();
    if wanted.is_empty() {
        return m;
    }
    let addresses: FxHashSet<u64> = image
        .variables
        .iter()
        .filter(|v| v.layout.is_some_and(|id| wanted.contains(&id)))
        .map(|v| v.address)
        .collect();
    let vars = image.variables_by_address();
    for s in image
        .symbols
        .iter()
        .filter(|s| s.kind != SymbolKind::Function && addresses.contains(&s.address))
    {
        if let Some(id) = vars.of(s).and_then(|v| v.layout) {
            m.entry(id).or_default().push(s);
        }
    }
    m
}

/// Notes the evidence of each member of `changes` (new layout `n`): measured or known
/// by name and offset, else declared by a cache-line group around it.
fn note_hot_members(
    n: &StructLayout<'_>,
    line_size: u64,
    hotness: &Hotness,
    changes: &mut [MemberChange],
) {
    if changes.is_empty() {
        return;
    }
    let groups = crate::layout::groups(n, line_size);
    for m in changes {
        let off = m.offset.new.or(m.offset.old).unwrap_or(0);
        let e = hotness.member(n.name, &m.name, off).or_else(|| {
            groups
                .iter()
                .any(|g| g.members.contains(&m.name))
                .then_some(Evidence::Declared(Declared::CachelineGroup))
        });
        m.evidence = e.map(Into::into);
    }
}

/// Named leaf members at every nesting level, depth first.
pub(super) fn leaves<'a, 'd>(s: &'a StructLayout<'d>) -> Vec<&'a Member<'d>> {
    s.flat_members()
        .into_iter()
        .filter(|(_, m)| m.nested.is_none() && m.name.is_some())
        .map(|(_, m)| m)
        .collect()
}

fn straddles(m: &Member<'_>, line_size: u64) -> bool {
    m.size <= line_size
        && m.offset / line_size != m.offset.saturating_add(m.size.max(1) - 1) / line_size
}

/// The change of one member; with `keep`, also a member that did not change.
fn member_change(
    o: Option<&Member<'_>>,
    n: Option<&Member<'_>>,
    line_size: u64,
    keep: bool,
) -> Option<MemberChange> {
    let name = n.or(o).and_then(|m| m.name)?.to_string();
    let mut kinds = Vec::new();
    match (o, n) {
        (None, Some(_)) => kinds.push(MemberChangeKind::Added),
        (Some(_), None) => kinds.push(MemberChangeKind::Removed),
        (Some(a), Some(b)) => {
            if a.start_bit() != b.start_bit() {
                kinds.push(MemberChangeKind::Moved);
            }
            if a.size != b.size || a.bit_size != b.bit_size {
                kinds.push(MemberChangeKind::Resized);
            }
            if type_key(a.type_name()) != type_key(b.type_name()) {
                kinds.push(MemberChangeKind::Retyped);
            }
        }
        (None, None) => {}
    }
    if kinds.is_empty() && !keep {
        return None;
    }
    let f = |m: Option<&Member<'_>>, g: &dyn Fn(&Member<'_>) -> u64| m.map(g);
    Some(MemberChange {
        name,
        kinds,
        type_name: Pair {
            old: o.map(|m| m.type_name().to_string()),
            new: n.map(|m| m.type_name().to_string()),
        },
        offset: Pair {
            old: f(o, &|m| m.offset),
            new: f(n, &|m| m.offset),
        },
        bit_offset: Pair {
            old: o.and_then(|m| m.bit_offset.map(u64::from)),
            new: n.and_then(|m| m.bit_offset.map(u64::from)),
        },
        bit_size: Pair {
            old: o.and_then(|m| m.bit_size.map(u64::from)),
            new: n.and_then(|m| m.bit_size.map(u64::from)),
        },
        size: Pair {
            old: f(o, &|m| m.size),
            new: f(n, &|m| m.size),
        },
        line: Pair {
            old: f(o, &|m| m.offset / line_size),
            new: f(n, &|m| m.offset / line_size),
        },
        evidence: None,
        straddles: Pair {
            old: o.map(|m| straddles(m, line_size)),
            new: n.map(|m| straddles(m, line_size)),
        },
    })
}

/// Members in new order, then removed ones in old order; with `all`, unchanged
/// members too (the full layout, for structs shown in full).
fn member_changes(
    o: &StructLayout<'_>,
    n: &StructLayout<'_>,
    line_size: u64,
    all: bool,
) -> Vec<MemberChange> {
    let (lo, ln) = (leaves(o), leaves(n));
    // A name can occur more than once (in two anonymous structs of a union): the
    // k-th occurrence pairs with the k-th.
    let keys = |l: &[&'_ Member<'_>]| -> Vec<Option<(String, usize)>> {
        let mut seen: FxHashMap<&str, usize> = FxHashMap::default();
        l.iter()
            .map(|m| {
                let name = m.name?;
                let k = seen.entry(name).or_default();
                *k += 1;
                Some((name.to_string(), *k))
            })
            .collect()
    };
    let (ko, kn) = (keys(&lo), keys(&ln));
    let index = |k: &[Option<(String, usize)>]| -> FxHashMap<(String, usize), usize> {
        k.iter()
            .enumerate()
            .filter_map(|(i, k)| Some((k.clone()?, i)))
            .collect()
    };
    let (io, in_) = (index(&ko), index(&kn));
    let mut out: Vec<MemberChange> = ln
        .iter()
        .zip(&kn)
        .filter_map(|(m, k)| {
            let before = k.as_ref().and_then(|k| io.get(k)).map(|&i| lo[i]);
            member_change(before, Some(m), line_size, all)
        })
        .collect();
    out.extend(
        lo.iter()
            .zip(&ko)
            .filter(|(_, k)| k.as_ref().is_some_and(|k| !in_.contains_key(k)))
            .filter_map(|(m, _)| member_change(Some(m), None, line_size, all)),
    );
    out
}

/// Names defined in only one of the builds: (added, removed). A Rust copy (`--lang
/// all`) counts apart from the C struct of its name, as it is paired apart.
pub fn added_removed(old: &Image<'_>, new: &Image<'_>) -> (usize, usize) {
    fn names<'d>(i: &Image<'d>) -> std::collections::BTreeSet<(&'d str, bool)> {
        // Named ones: an anonymous object type (`static struct { } rs`) has no name
        // to be added or removed under (and BTF does not describe it at all).
        i.structs
            .iter()
            .filter(|s| !s.name.is_empty())
            .map(|s| (s.name, s.rust))
            .collect()
    }
    let (o, n) = (names(old), names(new));
    (n.difference(&o).count(), o.difference(&n).count())
}

/// Structs whose layout changed, plus those `pinned` accepts (with their full layout).
pub fn changes(
    old: &Image<'_>,
    new: &Image<'_>,
    line_size: u64,
    pinned: &(dyn Fn(&str) -> bool + Sync),
    hotness: &Hotness,
) -> Vec<StructChange> {
    let mut out = Vec::new();
    // One build's types from DWARF, the other's from BTF: facts BTF lacks (declaring
    // files, alignment, which it infers, array dimensions it may flatten, `[0]`) are
    // not compared.
    let mixed = old.types_from != new.types_from;
    let mut types = SameTypes::default();
    // Old and new struct id of each change in `out`.
    let mut ids = Vec::new();
    for ((old_id, o), (new_id, n)) in pair(old, new, mixed, &mut types) {
        let full = pinned(n.name);
        if same(o, n, mixed, &mut types) && !full {
            continue;
        }
        if let Some(c) = struct_change(o, n, line_size, full, mixed, hotness) {
            out.push(c);
            ids.push((old_id, new_id));
        }
    }
    judge_with_instances(old, new, &mut out, ids);
    out
}

/// The change of a paired struct (with its full layout when `full`), before its
/// instances are known; none when only names of types or files differ.
fn struct_change(
    o: &StructLayout<'_>,
    n: &StructLayout<'_>,
    line_size: u64,
    full: bool,
    mixed: bool,
    hotness: &Hotness,
) -> Option<StructChange> {
    let mut members = member_changes(o, n, line_size, false);
    let mut layout = if full {
        member_changes(o, n, line_size, true)
    } else {
        Vec::new()
    };
    note_hot_members(n, line_size, hotness, &mut members);
    note_hot_members(n, line_size, hotness, &mut layout);
    let (lo, ln) = (lay(o, None, line_size), lay(n, None, line_size));
    let groups = super::groups::changes(o, n, line_size);
    let same_shape = o.size == n.size
        && (mixed || o.alignment == n.alignment)
        && o.holes == n.holes
        && o.padding == n.padding;
    if members.is_empty() && same_shape && !full {
        // Only names of types or files differ in ways members do not show.
        return None;
    }
    Some(StructChange {
        name: n.name.to_string(),
        kind: n.kind.keyword(),
        decl_file: n.decl_file.as_deref().map(str::to_string),
        size: Pair {
            old: o.size,
            new: n.size,
        },
        alignment: Pair {
            old: o.alignment,
            new: n.alignment,
        },
        cachelines: Pair {
            old: lo.cachelines,
            new: ln.cachelines,
        },
        holes: Pair {
            old: o.holes.len() as u64,
            new: n.holes.len() as u64,
        },
        sum_holes: Pair {
            old: o.sum_holes(),
            new: n.sum_holes(),
        },
        padding: Pair {
            old: o.padding,
            new: n.padding,
        },
        // Decided by `judge_with_instances`, once the instances are known.
        decision: verdict::judge_struct(false, false),
        sharing: None,
        severity: if members.is_empty() && same_shape {
            Severity::Info
        } else {
            Severity::Struct
        },
        members,
        layout,
        instances: Vec::new(),
        groups,
    })
}

/// Gives each change in `out` its instances (the objects of its new layout, else of
/// its old one; `ids`: the old and new struct id of each) and its verdict.
fn judge_with_instances(
    old: &Image<'_>,
    new: &Image<'_>,
    out: &mut [StructChange],
    ids: Vec<(StructId, StructId)>,
) {
    let wanted = |side: Side| -> FxHashSet<StructId> {
        ids.iter()
            .map(|p| match side {
                Side::Old => p.0,
                Side::New => p.1,
            })
            .collect()
    };
    let (inst_old, inst_new) = (
        instances(old, &wanted(Side::Old)),
        instances(new, &wanted(Side::New)),
    );
    let names = |list: Option<&Vec<&Symbol<'_>>>| -> Vec<String> {
        list.map(|l| l.iter().map(|s| s.qualified_name()).collect())
            .unwrap_or_default()
    };
    for (c, (o, n)) in out.iter_mut().zip(ids) {
        c.instances = names(inst_new.get(&n));
        if c.instances.is_empty() {
            c.instances = names(inst_old.get(&o));
        }
        if c.severity != Severity::Info {
            let hot_moved = c.members.iter().any(|m| {
                // A cache-line group's members are judged by the group rule; a member
                // is flagged on its own when known or measured hot.
                m.line.changed()
                    && m.evidence
                        .as_ref()
                        .is_some_and(|e| e.strength >= Strength::Known)
            });
            c.decision = verdict::judge_struct(c.groups.iter().any(|g| g.flagged), hot_moved);
            c.severity = match c.decision.verdict {
                verdict::Verdict::Flag(_) => Severity::of(c.decision.verdict),
                _ if !c.instances.is_empty() => Severity::StructWithInstance,
                _ => Severity::Struct,
            };
        }
    }
}

/// A type's spelling for comparison: `T[0]` and `T[]` take no room alike (and BTF
/// cannot tell them apart), and `T[2][3]` is laid out as `T[6]` (BTF as pahole
/// writes it may flatten dimensions).
fn type_key(t: &str) -> String {
    let t = t.replace("[0]", "[]");
    let Some(open) = t.find('[') else {
        return t;
    };
    let (base, dims) = t.split_at(open);
    let mut n: Option<u64> = Some(1);
    for d in dims.split('[').skip(1) {
        match d.strip_suffix(']').map(str::parse::<u64>) {
            Some(Ok(k)) => n = n.and_then(|n| n.checked_mul(k)),
            _ => return t,
        }
    }
    match n {
        Some(n) => format!("{base}[{n}]"),
        None => t,
    }
}

/// Equal layouts; for a DWARF/BTF pair, equal in what both describe.
fn same(o: &StructLayout<'_>, n: &StructLayout<'_>, mixed: bool, types: &mut SameTypes) -> bool {
    if !mixed {
        return types.layouts(o, n);
    }
    o.size == n.size && o.kind == n.kind && {
        let (a, b) = (o.flat_members(), n.flat_members());
        a.len() == b.len()
            && a.iter().zip(&b).all(|((da, ma), (db, mb))| {
                da == db
                    && ma.name == mb.name
                    && ma.offset == mb.offset
                    && ma.size == mb.size
                    && ma.bit_offset == mb.bit_offset
                    && ma.bit_size == mb.bit_size
                    && type_key(ma.type_name()) == type_key(mb.type_name())
            })
    }
}

/// Judges the lines of every struct of `structs` (`judge`) and lets the verdict read
/// them: a new meeting flags the struct (`member`), ended meetings and no new one make
/// it an improvement; a struct flagged already (a group) keeps its verdict.
pub fn judge_lines(
    structs: &mut [StructChange],
    (old, new): (&Image<'_>, &Image<'_>),
    freqs: (
        &crate::evidence::frequency::Frequencies,
        &crate::evidence::frequency::Frequencies,
    ),
    line_size: u64,
) {
    use rayon::prelude::*;
    use verdict::Verdict;
    structs.par_iter_mut().for_each(|c| {
        let Some(sharing) = super::struct_lines::judge(&c.name, (old, new), freqs, line_size)
        else {
            return;
        };
        if !matches!(c.decision.verdict, Verdict::Flag(_)) {
            let lines = verdict::judge_struct_lines(
                !sharing.new_meetings.is_empty(),
                !sharing.ended.is_empty(),
            );
            if let Some(d) = lines {
                c.decision = d;
                c.severity = Severity::of(d.verdict);
            }
        }
        c.sharing = Some(sharing);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member 4 bytes long 2 bytes before 2^64 (a forged offset) ends on the last
    /// 64-byte line, where it starts: it does not straddle (its end wrapped to byte 1,
    /// line 0, before).
    #[test]
    fn a_member_at_the_top_of_the_space_does_not_straddle() {
        let at = |offset| Member {
            offset,
            size: 4,
            ..Member::default()
        };
        assert!(!straddles(&at(u64::MAX - 1), 64));
        assert!(straddles(&at(62), 64));
        assert!(!straddles(&at(60), 64));
    }
}
