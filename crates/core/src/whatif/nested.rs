//! Members declared inside anonymous structs and unions. C names them as members of
//! the struct that holds the anonymous aggregate (`skb->dev`), so a change finds them
//! by name at any depth; the edit is made in the aggregate that declares the member,
//! and each aggregate around it is laid out again, out to the struct: members after a
//! grown anonymous struct move to their alignments, a union takes its largest
//! member's size rounded to its alignment, and every aggregate takes the largest
//! alignment of its members, as GCC lays them out.

use rustc_hash::FxHashMap;

use super::error::PredictError;
use super::relay::{Aligns, member_align, relay};
use crate::layout::holes;
use crate::model::{AggregateKind, StructLayout};

/// Where a member is declared: the index of each anonymous struct or union member
/// from the struct's top level down, then the member's index in the innermost one
/// (one index for a member of the struct itself).
pub type Path = Vec<usize>;

/// The path to `member` in struct `name`, looked up as C looks it up: among the
/// struct's members and, through each member that is an anonymous struct or union,
/// among its members. A named member of a struct type is another type (changed with
/// its own `--struct`) and is not looked into.
pub fn find(s: &StructLayout<'_>, name: &str, member: &str) -> Result<Path, PredictError> {
    let mut found = Vec::new();
    collect(s, member, &mut Vec::new(), &mut found);
    let count = found.len();
    match found.into_iter().next() {
        Some(path) if count == 1 => Ok(path),
        Some(_) => Err(PredictError::AmbiguousMember {
            name: name.to_string(),
            member: member.to_string(),
            count,
        }),
        None => Err(PredictError::NoMember {
            name: name.to_string(),
            member: member.to_string(),
        }),
    }
}

fn collect(s: &StructLayout<'_>, member: &str, at: &mut Path, found: &mut Vec<Path>) {
    for (i, m) in s.members.iter().enumerate() {
        at.push(i);
        if m.name == Some(member) {
            found.push(at.clone());
        } else if m.name.is_none()
            && let Some(n) = &m.nested
        {
            collect(n, member, at, found);
        }
        at.pop();
    }
}

/// Whether struct `s` declares a member `member` at any depth of its anonymous
/// structs and unions (a name C would refuse to declare twice).
pub fn declares(s: &StructLayout<'_>, member: &str) -> bool {
    let mut found = Vec::new();
    collect(s, member, &mut Vec::new(), &mut found);
    !found.is_empty()
}

/// What the member at a path is declared in, for messages: `the struct itself`,
/// `the anonymous union at offset 8`.
pub fn holder(s: &StructLayout<'_>, path: &[usize]) -> String {
    let mut at = s;
    let mut what = "the struct itself".to_string();
    for &i in path.iter().take(path.len().saturating_sub(1)) {
        let Some(m) = at.members.get(i) else { break };
        let Some(n) = m.nested.as_deref() else { break };
        what = format!("the anonymous {} at offset {}", n.kind.keyword(), m.offset);
        at = n;
    }
    what
}

/// The struct or union that declares the member at `path` (`s` itself for a path of
/// one index), with its own offsets.
pub fn declaring<'a, 'd>(s: &'a StructLayout<'d>, path: &[usize]) -> Option<&'a StructLayout<'d>> {
    let mut at = s;
    for &i in path.iter().take(path.len().saturating_sub(1)) {
        at = at.members.get(i)?.nested.as_deref()?;
    }
    Some(at)
}

/// An edit of the aggregate that declares a member: given that aggregate (offsets
/// counted from its own start) and the member's index in it, the aggregate laid out
/// again.
pub type Edit<'e, 'd> =
    dyn FnMut(&StructLayout<'d>, usize) -> Result<StructLayout<'d>, PredictError> + 'e;

/// `s` with `edit` made in the aggregate that declares the member at `path`, and
/// every anonymous aggregate around it laid out again at its new size and alignment,
/// out to `s`. A path of one index is `edit` on `s` itself.
pub fn within<'d>(
    s: &StructLayout<'d>,
    path: &[usize],
    aligns: &Aligns,
    edit: &mut Edit<'_, 'd>,
) -> Result<StructLayout<'d>, PredictError> {
    let Some((&i, rest)) = path.split_first() else {
        return Ok(s.clone());
    };
    if rest.is_empty() {
        return edit(s, i);
    }
    if s.members.get(i).and_then(|m| m.nested.as_deref()).is_none() {
        return Ok(s.clone());
    }
    let mut with = s.clone();
    let mut sizes = FxHashMap::default();
    // The member's own aggregate, then (in a union) its twins: `struct_group()`
    // declares the same members twice, in an anonymous struct and in a named one of
    // an anonymous type; a change to the members is a change to both copies.
    for j in std::iter::once(i).chain(twins(s, i)) {
        let Some(m) = s.members.get(j) else { continue };
        let Some(nested) = m.nested.as_deref() else {
            continue;
        };
        // Laid out from its own start: its alignment decides where its members fall,
        // and the aggregate around it places it at that alignment.
        let base = m.offset;
        let inner = within(&moved(nested, base, false), rest, aligns, edit)?;
        let inner = moved(&inner, base, true);
        sizes.insert(
            j,
            (inner.size, member_align(m, aligns).max(inner.alignment)),
        );
        with.members[j].nested = Some(Box::new(inner));
    }
    Ok(relay(&with, &sizes, aligns))
}

/// In a union, the other members laid out exactly as member `i` is (an aggregate
/// with the same members, names, offsets and sizes): `struct_group()`'s copies.
fn twins(s: &StructLayout<'_>, i: usize) -> Vec<usize> {
    if s.kind != AggregateKind::Union {
        return Vec::new();
    }
    let shape = |j: usize| {
        let n = s.members.get(j)?.nested.as_deref()?;
        Some((
            n.kind,
            n.size,
            n.flat_members()
                .iter()
                .map(|(d, m)| (*d, m.name, m.offset, m.size, m.bit_offset, m.bit_size))
                .collect::<Vec<_>>(),
        ))
    };
    let Some(mine) = shape(i) else {
        return Vec::new();
    };
    (0..s.members.len())
        .filter(|&j| j != i && shape(j).as_ref() == Some(&mine))
        .collect()
}

/// `s` with every member (at every depth) `by` bytes later (`later`) or earlier.
fn moved<'d>(s: &StructLayout<'d>, by: u64, later: bool) -> StructLayout<'d> {
    fn walk(s: &mut StructLayout<'_>, by: u64, later: bool) {
        for m in &mut s.members {
            m.offset = if later {
                m.offset.saturating_add(by)
            } else {
                m.offset.saturating_sub(by)
            };
            if let Some(n) = &mut m.nested {
                walk(n, by, later);
            }
        }
    }
    let mut out = s.clone();
    walk(&mut out, by, later);
    out
}

/// Holes and padding of every anonymous aggregate laid inline counted again at its
/// place (after an edit inside one moved or resized them).
pub fn recount_holes(s: &mut StructLayout<'_>) {
    for m in &mut s.members {
        let base = m.offset;
        if let Some(n) = &mut m.nested {
            recount_holes(n);
            holes::fill(n, base);
            holes::attribute(n, base);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CType, Member, TypeKind};
    use std::sync::Arc;

    fn member(name: &'static str, offset: u64, size: u64, align: u32) -> Member<'static> {
        Member::test_scalar(name, offset, size, align)
    }

    fn anon(
        kind: AggregateKind,
        offset: u64,
        size: u64,
        align: u32,
        members: Vec<Member<'static>>,
    ) -> Member<'static> {
        Member {
            name: None,
            offset,
            size,
            natural_alignment: align,
            ctype: Arc::new(CType {
                kind: match kind {
                    AggregateKind::Struct => TypeKind::Struct,
                    AggregateKind::Union => TypeKind::Union,
                },
                c: format!("{} {{...}}", kind.keyword()).into(),
                ..CType::default()
            })
            .into(),
            nested: Some(Box::new(StructLayout {
                kind,
                size,
                alignment: u64::from(align),
                members,
                ..StructLayout::default()
            })),
            ..Member::default()
        }
    }

    /// struct t { long a; union { struct { char b; int c; }; long d; }; struct { x
    /// named; } n; } written out: a at 0; the union at 8 (8 B): the struct (b at 8,
    /// c at 12; 8 B) and d at 8; a named member `n` of an anonymous type at 16 whose
    /// own member `e` is not looked into.
    fn sample() -> StructLayout<'static> {
        let inner = anon(
            AggregateKind::Struct,
            8,
            8,
            4,
            vec![member("b", 8, 1, 1), member("c", 12, 4, 4)],
        );
        let union = anon(
            AggregateKind::Union,
            8,
            8,
            8,
            vec![inner, member("d", 8, 8, 8)],
        );
        let mut named = anon(AggregateKind::Struct, 16, 4, 4, vec![member("e", 16, 4, 4)]);
        named.name = Some("n");
        StructLayout {
            name: "t",
            size: 24,
            alignment: 8,
            members: vec![member("a", 0, 8, 8), union, named],
            ..StructLayout::default()
        }
    }

    #[test]
    fn members_are_found_through_anonymous_aggregates_only() {
        let s = sample();
        assert_eq!(find(&s, "t", "a"), Ok(vec![0]));
        assert_eq!(find(&s, "t", "c"), Ok(vec![1, 0, 1]));
        assert_eq!(find(&s, "t", "d"), Ok(vec![1, 1]));
        assert_eq!(find(&s, "t", "n"), Ok(vec![2]));
        assert_eq!(
            find(&s, "t", "e"),
            Err(PredictError::NoMember {
                name: "t".into(),
                member: "e".into()
            })
        );
        assert_eq!(holder(&s, &[1, 0, 1]), "the anonymous struct at offset 8");
        assert_eq!(holder(&s, &[1, 1]), "the anonymous union at offset 8");
        assert_eq!(holder(&s, &[0]), "the struct itself");
        // Two members of one name (a forged table): refused, not guessed.
        let mut twice = s.clone();
        if let Some(u) = twice.members[1].nested.as_deref_mut() {
            u.members[1].name = Some("b");
        }
        assert_eq!(
            find(&twice, "t", "b"),
            Err(PredictError::AmbiguousMember {
                name: "t".into(),
                member: "b".into(),
                count: 2
            })
        );
    }

    /// c (int at 12) grown by 8 to 12 B: the inner struct is b at 8, c at 12..24,
    /// align_up(16, 4) = 16 B; the union max(16, d's 8) = 16 B at 8; n moves from 16
    /// to 24 and e with it; t is align_up(28, 8) = 32 B.
    #[test]
    fn a_grown_member_resizes_each_aggregate_around_it() {
        let s = sample();
        let a = Aligns::default();
        let path = find(&s, "t", "c").unwrap();
        let r = within(&s, &path, &a, &mut |agg, idx| {
            let mut sizes = FxHashMap::default();
            sizes.insert(idx, (agg.members[idx].size + 8, 4));
            Ok(relay(agg, &sizes, &a))
        })
        .unwrap();
        let got: Vec<(Option<&str>, u64, u64)> = r
            .flat_members()
            .iter()
            .map(|(_, m)| (m.name, m.offset, m.size))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some("a"), 0, 8),
                (None, 8, 16),
                (None, 8, 16),
                (Some("b"), 8, 1),
                (Some("c"), 12, 12),
                (Some("d"), 8, 8),
                (Some("n"), 24, 4),
                (Some("e"), 24, 4),
            ]
        );
        assert_eq!((r.size, r.alignment), (32, 8));
    }

    /// union { struct { int a; short b; }; struct { int a; short b; } grp; struct {
    /// int a; int c; } other; } (8 B, align 4), as struct_group(grp, ...) and one more
    /// struct: a grown by 4 grows both copies of the group (a 4..8 is b's old place:
    /// b at 8, 12 B each), not the other struct; the union is 12 B.
    #[test]
    fn struct_group_copies_change_together() {
        let group = |at_b: u64| vec![member("a", 0, 4, 4), member("b", at_b, 2, 2)];
        let mut grp = anon(AggregateKind::Struct, 0, 8, 4, group(4));
        grp.name = Some("grp");
        let mut other = anon(
            AggregateKind::Struct,
            0,
            8,
            4,
            vec![member("a2", 0, 4, 4), member("c", 4, 4, 4)],
        );
        other.name = Some("other");
        let u = StructLayout {
            name: "u",
            kind: AggregateKind::Union,
            size: 8,
            alignment: 4,
            members: vec![anon(AggregateKind::Struct, 0, 8, 4, group(4)), grp, other],
            ..StructLayout::default()
        };
        let a = Aligns::default();
        let path = find(&u, "u", "a").unwrap();
        assert_eq!(path, vec![0, 0]);
        let r = within(&u, &path, &a, &mut |agg, idx| {
            let mut sizes = FxHashMap::default();
            sizes.insert(idx, (8, 4));
            Ok(relay(agg, &sizes, &a))
        })
        .unwrap();
        let got: Vec<(Option<&str>, u64, u64)> = r
            .flat_members()
            .iter()
            .map(|(_, m)| (m.name, m.offset, m.size))
            .collect();
        assert_eq!(
            got,
            vec![
                (None, 0, 12),
                (Some("a"), 0, 8),
                (Some("b"), 8, 2),
                (Some("grp"), 0, 12),
                (Some("a"), 0, 8),
                (Some("b"), 8, 2),
                (Some("other"), 0, 8),
                (Some("a2"), 0, 4),
                (Some("c"), 4, 4),
            ]
        );
        assert_eq!(r.size, 12);
    }
}
