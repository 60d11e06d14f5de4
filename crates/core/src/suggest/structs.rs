//! Candidate fixes for failing struct rules on one build (`line_start`, `together`,
//! `separate`, `max_size`, `max_cachelines`, `max_holes`) and for a cache-line group
//! over its `max_size`: members aligned, declared elsewhere, moved into holes or out of
//! the group, as `whatif` changes with the C to paste. Nothing here lays a member out:
//! `image.rs` predicts each candidate and evaluates the rules again on the prediction.

use crate::check::eval::{Measured, Outcome};
use crate::check::rules::split_group;
use crate::evidence::Hotness;
use crate::layout::groups::{groups, is_marker};
use crate::model::{Image, Member, StructLayout};
use crate::whatif::Change;

use super::members::member_decl;

/// One candidate: the changes, the C to paste, and what the ranking needs to know.
#[derive(Debug, Clone, Default)]
pub(super) struct Candidate {
    pub changes: Vec<Change>,
    pub declaration: String,
    /// Members it moves that have hot evidence (measured or known).
    pub hot: Vec<String>,
    /// Kept only when the prediction makes the struct or its holes smaller.
    pub must_shrink: bool,
}

impl Candidate {
    pub(super) fn plain(changes: Vec<Change>, declaration: String) -> Self {
        Candidate {
            changes,
            declaration,
            ..Candidate::default()
        }
    }
}

/// Single changes tried beside the whole set: holes filled one at a time, and the later
/// members of a `separate` set.
const MAX_SINGLE: usize = 3;

/// The struct an outcome's target names (`NAME`, or `NAME (FILE)` when several
/// layouts share the name), with its layout.
fn target_layout<'a, 'd>(
    image: &'a Image<'d>,
    target: &str,
) -> Option<(&'d str, &'a StructLayout<'d>)> {
    let (name, file) = match target.strip_suffix(')').and_then(|t| t.split_once(" (")) {
        Some((n, f)) => (n, Some(f)),
        None => (target, None),
    };
    image
        .structs
        .iter()
        .filter(|s| s.name == name)
        .find(|s| file.is_none() || s.decl_file.as_deref() == file)
        .map(|s| (s.name, &**s))
}

/// Index of top-level member `name`: whatif moves and aligns those only.
fn top(layout: &StructLayout<'_>, name: &str) -> Option<usize> {
    layout.members.iter().position(|m| m.name == Some(name))
}

fn declare_after(
    name: &str,
    layout: &StructLayout<'_>,
    member: &str,
    after: Option<&str>,
) -> String {
    let where_ = after.map_or("first".to_string(), |a| format!("after {a}"));
    format!(
        "/* struct {name}: declare {where_} */ {}",
        member_decl(layout, name, member, "")
    )
}

/// A member moved after `after` (first when `None`).
fn moved(name: &str, member: &str, after: Option<&str>) -> Change {
    Change::MemberMove {
        name: name.to_string(),
        member: member.to_string(),
        after: after.map(str::to_string),
    }
}

const ANONYMOUS: &str = "a member of the rule is inside an anonymous struct or union: members are moved for this rule at the top level only";

/// The candidates for a failing struct rule, and a note when there are none.
pub(super) fn for_struct(image: &Image<'_>, o: &Outcome) -> (Vec<Candidate>, Option<String>) {
    let Some(target) = o.target.as_deref() else {
        return (Vec::new(), Some("it names nothing in the build".into()));
    };
    if o.key == "max_growth" {
        return (
            Vec::new(),
            Some(
                "max_growth compares with OLD: give both builds to `check OLD NEW`; on one build there is nothing to compare"
                    .into(),
            ),
        );
    }
    let Some((name, layout)) = target_layout(image, target) else {
        return (Vec::new(), Some("the struct is not in the build".into()));
    };
    if o.measured == Measured::NotFound {
        return (
            Vec::new(),
            Some("a member it names is not in the struct".into()),
        );
    }
    let line = image.line_size.max(1);
    match o.key {
        "line_start" => {
            let member = o.expected.trim_matches('"');
            // Aligning reaches a member inside anonymous structs and unions too.
            if crate::whatif::nested::find(layout, name, member).is_err() {
                return (Vec::new(), Some(ANONYMOUS.into()));
            }
            let c = Candidate::plain(
                vec![Change::MemberAlign {
                    name: name.to_string(),
                    member: member.to_string(),
                    align: line,
                }],
                format!(
                    "/* struct {name} */ {}",
                    member_decl(layout, name, member, " ____cacheline_aligned")
                ),
            );
            (vec![c], None)
        }
        "together" => together(name, layout, o),
        "separate" => separate(name, layout, o, line),
        "max_size" | "max_cachelines" | "max_holes" => into_holes(name, layout),
        _ => (Vec::new(), Some(format!("no fix is tried for {}", o.key))),
    }
}

/// The member names of a `together` or `separate` set: the rule's value as `check`
/// writes it (`["a", "b"]`, which JSON reads), else the members at fault.
fn set_of(o: &Outcome) -> Vec<String> {
    serde_json::from_str(&o.expected)
        .unwrap_or_else(|_| o.offenders.iter().map(|x| x.name.clone()).collect())
}

/// The set's members in declaration order, when all are top-level.
fn declared<'a>(layout: &StructLayout<'_>, names: &'a [String]) -> Option<Vec<(usize, &'a str)>> {
    let mut v: Vec<(usize, &str)> = names
        .iter()
        .map(|n| top(layout, n).map(|i| (i, n.as_str())))
        .collect::<Option<_>>()?;
    v.sort_unstable();
    v.dedup();
    Some(v)
}

/// `together`: the set's members declared right after the first one, in order; or
/// every one but the last declared right before the last.
fn together(
    name: &str,
    layout: &StructLayout<'_>,
    o: &Outcome,
) -> (Vec<Candidate>, Option<String>) {
    let names = set_of(o);
    let Some(set) = declared(layout, &names) else {
        return (Vec::new(), Some(ANONYMOUS.into()));
    };
    if set.len() < 2 {
        return (Vec::new(), None);
    }
    let chain = |members: &[(usize, &str)], first: Option<&str>| {
        let mut changes = Vec::new();
        let mut decl = Vec::new();
        let mut after = first.map(str::to_string);
        for (_, m) in members {
            changes.push(moved(name, m, after.as_deref()));
            decl.push(declare_after(name, layout, m, after.as_deref()));
            after = Some(m.to_string());
        }
        Candidate::plain(changes, decl.join("\n"))
    };
    let (first, rest) = (set[0], &set[1..]);
    let mut out = vec![chain(rest, Some(first.1))];
    // Before the last: after the member declared before it that is not moved.
    let (last_i, _) = set[set.len() - 1];
    let moving = &set[..set.len() - 1];
    let anchor = layout.members[..last_i]
        .iter()
        .enumerate()
        .rev()
        .find(|(i, m)| m.name.is_some() && !moving.iter().any(|(j, _)| j == i))
        .and_then(|(_, m)| m.name);
    let before = chain(moving, anchor);
    if before.changes != out[0].changes {
        out.push(before);
    }
    (out, None)
}

/// `separate`: each later member sharing a line with an earlier one aligned to a line,
/// or declared after the first member that ends past the end of the earlier one's line.
fn separate(
    name: &str,
    layout: &StructLayout<'_>,
    o: &Outcome,
    line: u64,
) -> (Vec<Candidate>, Option<String>) {
    let names = set_of(o);
    let Some(set) = declared(layout, &names) else {
        return (Vec::new(), Some(ANONYMOUS.into()));
    };
    let lines = |m: &Member<'_>| {
        (
            m.offset / line,
            (m.offset.saturating_add(m.size.max(1) - 1) / line),
        )
    };
    let mut out = Vec::new();
    let mut later: Vec<usize> = Vec::new();
    for (k, &(bi, b)) in set.iter().enumerate() {
        let mb = &layout.members[bi];
        // The earlier members it shares a line with.
        let Some(&(ai, _)) = set[..k].iter().find(|(ai, _)| {
            let (a0, a1) = lines(&layout.members[*ai]);
            let (b0, b1) = lines(mb);
            a0.max(b0) <= a1.min(b1)
        }) else {
            continue;
        };
        if later.len() >= MAX_SINGLE {
            break;
        }
        later.push(bi);
        out.push(Candidate::plain(
            vec![Change::MemberAlign {
                name: name.to_string(),
                member: b.to_string(),
                align: line,
            }],
            format!(
                "/* struct {name} */ {}",
                member_decl(layout, name, b, " ____cacheline_aligned")
            ),
        ));
        // Past the end of the earlier member's last line: after the first member that
        // ends there once `b` has left its place.
        let a = &layout.members[ai];
        let line_end = lines(a).1.saturating_add(1).saturating_mul(line);
        let past = layout
            .members
            .iter()
            .enumerate()
            .skip(bi + 1)
            .find(|(_, x)| {
                x.name.is_some()
                    && x.offset.saturating_add(x.size).saturating_sub(mb.size) >= line_end
            });
        if let Some((_, x)) = past
            && let Some(x) = x.name
        {
            out.push(Candidate::plain(
                vec![moved(name, b, Some(x))],
                declare_after(name, layout, b, Some(x)),
            ));
        }
    }
    if later.len() > 1 {
        out.push(align_all(name, layout, &later, line));
    }
    (out, None)
}

/// The candidate that aligns every member of `later` (indexes in `layout`) to a
/// line of its own.
fn align_all(name: &str, layout: &StructLayout<'_>, later: &[usize], line: u64) -> Candidate {
    let changes = later
        .iter()
        .filter_map(|&i| layout.members[i].name)
        .map(|m| Change::MemberAlign {
            name: name.to_string(),
            member: m.to_string(),
            align: line,
        })
        .collect();
    let decl = later
        .iter()
        .filter_map(|&i| layout.members[i].name)
        .map(|m| {
            format!(
                "/* struct {name} */ {}",
                member_decl(layout, name, m, " ____cacheline_aligned")
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    Candidate::plain(changes, decl)
}

/// A member's alignment as the layout knows it: what the source asked, else its
/// type's natural one, else the largest power of two up to 8 dividing its size.
fn alignment(m: &Member<'_>) -> u64 {
    let a = u64::from(m.natural_alignment.max(m.alignment.unwrap_or(0)));
    if a > 0 {
        a
    } else {
        Change::default_insert_alignment(m.size)
    }
}

/// The cache-line group each top-level member is in (markers: `None`), and the group
/// a member declared right after each one would be in.
fn group_spans(layout: &StructLayout<'_>) -> (Vec<Option<String>>, Vec<Option<String>>) {
    let mut inside: Option<String> = None;
    let (mut of, mut after) = (Vec::new(), Vec::new());
    for m in &layout.members {
        let n = m.name.unwrap_or("");
        if let Some(g) = n.strip_prefix(crate::layout::groups::BEGIN) {
            inside = Some(g.to_string());
            of.push(None);
        } else if n.starts_with(crate::layout::groups::END) {
            inside = None;
            of.push(None);
        } else {
            of.push(inside.clone());
        }
        after.push(inside.clone());
    }
    (of, after)
}

/// `max_size`, `max_cachelines`, `max_holes`: for each hole, the last-declared member
/// after it that fits its size and alignment, declared right after the member before
/// the hole, within the same cache-line group. All of them as one candidate, and the
/// first few alone; each kept only if the prediction shrinks the struct or its holes.
fn into_holes(name: &str, layout: &StructLayout<'_>) -> (Vec<Candidate>, Option<String>) {
    if layout.holes.is_empty() {
        return (
            Vec::new(),
            Some("it has no hole to fill: a member has to leave it or shrink".into()),
        );
    }
    let (group_of, group_after) = group_spans(layout);
    let mut used: Vec<usize> = Vec::new();
    let mut moves: Vec<(usize, usize)> = Vec::new();
    for h in &layout.holes {
        // The member before the hole: the last one ending at its start (not one moved).
        let Some(before) = layout
            .members
            .iter()
            .rposition(|m| m.name.is_some() && m.offset.saturating_add(m.size) == h.offset)
            .filter(|b| !used.contains(b))
        else {
            continue;
        };
        let fits = |(j, m): &(usize, &Member<'_>)| {
            let a = alignment(m);
            let at = h.offset.div_ceil(a).saturating_mul(a);
            *j > before + 1
                && !used.contains(j)
                && !moves.iter().any(|(_, b)| b == j)
                && m.name.is_some_and(|n| !is_marker(n))
                && m.nested.is_none()
                && m.bit_size.is_none()
                && m.size > 0
                && group_of[*j] == group_after[before]
                && at.saturating_add(m.size) <= h.offset.saturating_add(h.size)
        };
        if let Some((j, _)) = layout.members.iter().enumerate().rev().find(fits) {
            used.push(j);
            moves.push((j, before));
        }
    }
    if moves.is_empty() {
        return (
            Vec::new(),
            Some("no member declared after a hole fits in it (its size and alignment)".into()),
        );
    }
    let candidate = |set: &[(usize, usize)]| {
        let mut changes = Vec::new();
        let mut decl = Vec::new();
        for &(j, before) in set {
            let (Some(m), after) = (layout.members[j].name, layout.members[before].name) else {
                continue;
            };
            changes.push(moved(name, m, after));
            decl.push(declare_after(name, layout, m, after));
        }
        Candidate {
            changes,
            declaration: decl.join("\n"),
            hot: Vec::new(),
            must_shrink: true,
        }
    };
    let mut out = vec![candidate(&moves)];
    if moves.len() > 1 {
        out.extend(
            moves
                .iter()
                .take(MAX_SINGLE)
                .map(|m| candidate(std::slice::from_ref(m))),
        );
    }
    (out, None)
}

/// A group over its `max_size`: the smallest top-level member of it (by size, then
/// the last declared) at least as large as the excess, declared right after the
/// group's end marker; one without hot evidence too when that one has some; else the
/// fewest trailing members whose sizes add up to the excess.
pub(super) fn for_group_size(
    image: &Image<'_>,
    o: &Outcome,
    hotness: Option<&Hotness>,
) -> (Vec<Candidate>, Option<String>) {
    let Some(target) = o.target.as_deref() else {
        return (Vec::new(), Some("it names nothing in the build".into()));
    };
    let (s, g) = split_group(target);
    let line = image.line_size.max(1);
    let Some((layout, group)) = image.structs_named(|n| n == s).find_map(|(_, l)| {
        groups(l, line)
            .into_iter()
            .find(|x| x.name == g)
            .map(|x| (l, x))
    }) else {
        return (Vec::new(), Some("the group is not in the build".into()));
    };
    let (Ok(max), Measured::Bytes { value }) = (o.expected.parse::<u64>(), &o.measured) else {
        return (Vec::new(), None);
    };
    let excess = value.saturating_sub(max);
    let hot = |m: &Member<'_>| {
        hotness.is_some_and(|h| {
            m.name
                .is_some_and(|n| h.member(layout.name, n, m.offset).is_some())
        })
    };
    // The group's top-level members, in declaration order.
    let members = group_members(layout, &group.members);
    if members.is_empty() {
        return (Vec::new(), Some(ANONYMOUS.into()));
    }
    let out_of = |set: &[&Member<'_>]| {
        let names: Vec<&str> = set.iter().filter_map(|m| m.name).collect();
        let (changes, declaration) = out_of_group(layout, s, g, &names);
        Candidate {
            changes,
            declaration,
            hot: set
                .iter()
                .filter(|m| hot(m))
                .filter_map(|m| m.name.map(str::to_string))
                .collect(),
            must_shrink: false,
        }
    };
    let singles = smallest_first(&members, excess);
    let mut out = Vec::new();
    if let Some(m) = singles.first() {
        out.push(out_of(&[m]));
    }
    if singles.first().is_some_and(|m| hot(m))
        && let Some(m) = singles.iter().find(|m| !hot(m))
    {
        out.push(out_of(&[m]));
    }
    if out.is_empty()
        && let Some(set) = trailing(&members, excess)
    {
        out.push(out_of(set));
    }
    let note = out
        .is_empty()
        .then(|| "no member of it, nor all of them, is as large as the excess".to_string());
    (out, note)
}

/// A group's own members declared in the struct itself (`in_group`: its member
/// names), in declaration order: those a fix can move out of it.
pub(super) fn group_members<'a, 'd>(
    layout: &'a StructLayout<'d>,
    in_group: &[String],
) -> Vec<&'a Member<'d>> {
    layout
        .members
        .iter()
        .filter(|m| {
            m.name
                .is_some_and(|n| !is_marker(n) && in_group.iter().any(|x| x == n))
        })
        .collect()
}

/// The members of `members` at least as large as `excess` bytes (no bitfields),
/// smallest first, the last declared first among equals.
pub(super) fn smallest_first<'a, 'd>(
    members: &[&'a Member<'d>],
    excess: u64,
) -> Vec<&'a Member<'d>> {
    let mut singles: Vec<(usize, &Member<'_>)> = members
        .iter()
        .enumerate()
        .filter(|(_, m)| m.size >= excess && m.bit_size.is_none())
        .map(|(i, m)| (i, *m))
        .collect();
    singles.sort_by_key(|(i, m)| (m.size, std::cmp::Reverse(*i)));
    singles.into_iter().map(|(_, m)| m).collect()
}

/// The fewest trailing members of `members` whose sizes add up to `excess`, when all
/// of them do.
pub(super) fn trailing<'a, 'd>(
    members: &'a [&'a Member<'d>],
    excess: u64,
) -> Option<&'a [&'a Member<'d>]> {
    let mut sum = 0u64;
    let mut k = 0;
    for m in members.iter().rev() {
        if sum >= excess {
            break;
        }
        sum = sum.saturating_add(m.size);
        k += 1;
    }
    (sum >= excess).then(|| &members[members.len() - k..])
}

/// Members `names` of struct `s` (laid out as `layout`) declared right after group
/// `g`'s end marker, in their order: the changes, and the C to paste.
pub(super) fn out_of_group(
    layout: &StructLayout<'_>,
    s: &str,
    g: &str,
    names: &[&str],
) -> (Vec<Change>, String) {
    let end = format!("{}{g}", crate::layout::groups::END);
    let mut after = end.clone();
    let mut changes = Vec::new();
    let mut decl = Vec::new();
    for n in names {
        changes.push(moved(s, n, Some(&after)));
        let where_ = if after == end {
            format!("__cacheline_group_end({g})")
        } else {
            after.clone()
        };
        decl.push(format!(
            "/* struct {s}: declare after {where_} */ {}",
            member_decl(layout, s, n, "")
        ));
        after = n.to_string();
    }
    (changes, decl.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CType, TypeKind};
    use std::sync::Arc;

    fn member(name: &'static str, c: &str, offset: u64, size: u64, align: u32) -> Member<'static> {
        Member {
            name: Some(name),
            offset,
            size,
            natural_alignment: align,
            ctype: Arc::new(CType {
                kind: TypeKind::Base,
                c: c.into(),
                ..CType::default()
            })
            .into(),
            ..Member::default()
        }
    }

    /// struct t { char a; long b; begin(g); int g1; long g2; char g3; end(g); long z;
    /// char c; char d; }, laid by hand: a 0, hole 1..8, b 8, g1 16, hole 20..24, g2 24,
    /// g3 32, hole 33..40, z 40, c 48, d 49, 56 B. The hole after a takes d (the last
    /// declared that fits 7 B); the one after g1, inside g, takes g3, not c, declared
    /// later but outside g; the one after g's end marker takes c. All of them as one
    /// candidate, then each alone.
    #[test]
    fn holes_are_filled_by_the_last_declared_member_that_fits_within_its_group() {
        let mut s = StructLayout {
            name: "t",
            size: 56,
            alignment: 8,
            members: vec![
                member("a", "char", 0, 1, 1),
                member("b", "long int", 8, 8, 8),
                member("__cacheline_group_begin__g", "__u8[0]", 16, 0, 1),
                member("g1", "int", 16, 4, 4),
                member("g2", "long int", 24, 8, 8),
                member("g3", "char", 32, 1, 1),
                member("__cacheline_group_end__g", "__u8[0]", 33, 0, 1),
                member("z", "long int", 40, 8, 8),
                member("c", "char", 48, 1, 1),
                member("d", "char", 49, 1, 1),
            ],
            ..StructLayout::default()
        };
        crate::layout::holes::fill(&mut s, 0);
        let holes: Vec<(u64, u64)> = s.holes.iter().map(|h| (h.offset, h.size)).collect();
        assert_eq!(holes, [(1, 7), (20, 4), (33, 7)]);
        let (of, after) = group_spans(&s);
        let g = Some("g".to_string());
        assert_eq!(of[3..6], [g.clone(), g.clone(), g.clone()]);
        assert_eq!((of[2].clone(), after[2].clone()), (None, g.clone()));
        assert_eq!((of[6].clone(), after[6].clone()), (None, None));
        let (out, note) = into_holes("t", &s);
        assert_eq!(note, None);
        let changes: Vec<Vec<Change>> = out.iter().map(|c| c.changes.clone()).collect();
        let d_after_a = moved("t", "d", Some("a"));
        let g3_after_g1 = moved("t", "g3", Some("g1"));
        let c_after_end = moved("t", "c", Some("__cacheline_group_end__g"));
        assert_eq!(
            changes,
            [
                vec![d_after_a.clone(), g3_after_g1.clone(), c_after_end.clone()],
                vec![d_after_a],
                vec![g3_after_g1],
                vec![c_after_end]
            ]
        );
        assert!(out.iter().all(|c| c.must_shrink));
        assert_eq!(
            out[2].declaration,
            "/* struct t: declare after g1 */ char g3;"
        );
    }

    /// struct t { char a; long b; }: the hole of 7 B after a, and only b (8 B) after
    /// it: nothing fits, and the note says so.
    #[test]
    fn a_hole_nothing_fits_is_said() {
        let mut s = StructLayout {
            name: "t",
            size: 16,
            alignment: 8,
            members: vec![
                member("a", "char", 0, 1, 1),
                member("b", "long int", 8, 8, 8),
            ],
            ..StructLayout::default()
        };
        crate::layout::holes::fill(&mut s, 0);
        let (out, note) = into_holes("t", &s);
        assert!(out.is_empty());
        assert_eq!(
            note.as_deref(),
            Some("no member declared after a hole fits in it (its size and alignment)")
        );
    }
}
