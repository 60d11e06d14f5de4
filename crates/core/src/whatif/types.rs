//! Struct changes carried through the types: a struct resized, a member grown or an
//! alignment raised changes the layout of every struct that embeds it (by value or
//! as an array), to a fixed point, the way the compiler would lay them out again.

use rustc_hash::{FxHashMap, FxHashSet};

use super::error::PredictError;
use super::nested;
pub use super::relay::{Aligns, InsertAt, MemberInsert, insert, relay, reorder};
use super::relay::{finish, member_align};
use crate::link::align::align_up;
use crate::model::{Image, Member, StructId, StructLayout, TypeKind, saturate_u32};

/// The new size and alignment of one struct (or union) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Its size in bytes.
    pub size: u64,
    /// Its alignment in bytes.
    pub align: u64,
}

/// Every struct whose layout changed, by id, laid out again.
pub type Relaid<'d> = FxHashMap<StructId, StructLayout<'d>>;

/// A member growth asked for directly: `struct.member` grows by `grow` bytes.
#[derive(Debug, Clone)]
pub struct MemberGrowth<'a> {
    /// The member.
    pub member: &'a str,
    /// The bytes it grows by.
    pub grow: u64,
}

/// A member moved: declared right after member `after` (`None`: first).
#[derive(Debug, Clone)]
pub struct MemberMove<'a> {
    /// The member.
    pub member: &'a str,
    /// The member it is declared after; `None`: first.
    pub after: Option<&'a str>,
}

/// The edits a change asks of one struct name, before propagation.
#[derive(Debug, Clone, Default)]
pub struct StructEdit<'a> {
    /// New total size (a resize adds or removes bytes at the end).
    pub size: Option<u64>,
    /// A new alignment (at least the old one).
    pub align: Option<u64>,
    /// Members that grow.
    pub members: Vec<MemberGrowth<'a>>,
    /// Members aligned (`__aligned(N)` or `____cacheline_aligned` on the member).
    pub member_aligns: Vec<(&'a str, u64)>,
    /// Members declared elsewhere in the struct.
    pub moves: Vec<MemberMove<'a>>,
    /// Members inserted.
    pub inserts: Vec<MemberInsert<'a>>,
}

/// Lays out again every struct named in `edits` and every struct embedding one that
/// changed, until nothing more changes. Returns the new layouts and the new shape of
/// each changed name.
pub fn propagate<'d>(
    image: &Image<'d>,
    edits: &FxHashMap<String, StructEdit<'_>>,
) -> Result<(Relaid<'d>, FxHashMap<String, Shape>), PredictError> {
    let mut relaid: Relaid<'d> = FxHashMap::default();
    let mut shapes: FxHashMap<String, Shape> = FxHashMap::default();
    // Old alignments: what members of these types were placed at.
    let mut aligns: Aligns = FxHashMap::default();
    for st in image.structs.iter().filter(|st| !st.name.is_empty()) {
        aligns
            .entry(st.name.to_string())
            .or_insert(st.alignment.max(1));
    }
    let mut pending: Vec<String> = Vec::new();
    for (name, edit) in edits {
        let ids: Vec<StructId> = image
            .structs_named(|n| n == name)
            .map(|(id, _)| id)
            .collect();
        if ids.is_empty() {
            return Err(PredictError::NoStruct(name.to_string()));
        }
        for id in ids {
            let s = edited(image.struct_by_id(id), name, edit, &aligns)?;
            shapes.insert(
                name.clone(),
                Shape {
                    size: s.size,
                    align: s.alignment,
                },
            );
            relaid.insert(id, s);
        }
        pending.push(name.clone());
    }
    // Embedders, to a fixed point (a struct is laid out again once per changed name
    // it embeds; the walk ends because a changed name is queued once). Only the
    // structs that hold a name are asked about it: asking every struct about every
    // name made a change to `list_head` take seconds.
    let holders = holders(image, &relaid);
    let mut queued: FxHashSet<String> = pending.iter().cloned().collect();
    while let Some(name) = pending.pop() {
        let shape = shapes[&name];
        for &id in holders.get(name.as_str()).map_or(&[][..], Vec::as_slice) {
            let current = relaid.get(&id).unwrap_or_else(|| image.struct_by_id(id));
            if current.name == name {
                continue;
            }
            let Some(next) = embed(current, &name, shape, &aligns) else {
                continue;
            };
            if next.size != current.size || next.alignment != current.alignment {
                let key = next.name.to_string();
                if !key.is_empty() {
                    shapes.insert(
                        key.clone(),
                        Shape {
                            size: next.size,
                            align: next.alignment,
                        },
                    );
                    if queued.insert(key.clone()) {
                        pending.push(key);
                    }
                }
            }
            relaid.insert(id, next);
        }
    }
    Ok((relaid, shapes))
}

/// The structs that hold each struct or union name by value (`held_by_value`), at
/// any depth of their anonymous aggregates, by increasing id: `image`'s layouts, or
/// the edited ones in `relaid` where a struct was edited (an insert can add a member
/// of a type). Laying a struct out again keeps its members' types, so the holders
/// stay these.
fn holders(image: &Image<'_>, relaid: &Relaid<'_>) -> FxHashMap<String, Vec<StructId>> {
    fn held<'s>(s: &'s StructLayout<'_>, out: &mut Vec<&'s str>) {
        for m in &s.members {
            if let Some(nested) = &m.nested {
                held(nested, out);
            }
            if let Some(name) = held_by_value(m) {
                out.push(name);
            }
        }
    }
    let mut by_name: FxHashMap<String, Vec<StructId>> = FxHashMap::default();
    let mut names = Vec::new();
    for i in 0..image.structs.len() {
        let id = StructId(i);
        let s = relaid.get(&id).unwrap_or_else(|| image.struct_by_id(id));
        names.clear();
        held(s, &mut names);
        for name in &names {
            match by_name.get_mut(*name) {
                Some(ids) if ids.last() == Some(&id) => {}
                Some(ids) => ids.push(id),
                None => {
                    by_name.insert((*name).to_string(), vec![id]);
                }
            }
        }
    }
    by_name
}

/// Struct `old` (named `name`) with `edit` made: its members, then its alignment
/// and its size.
fn edited<'d>(
    old: &StructLayout<'d>,
    name: &str,
    edit: &StructEdit<'_>,
    aligns: &Aligns,
) -> Result<StructLayout<'d>, PredictError> {
    let mut s = edit_members(old, name, edit, aligns)?;
    if let Some(a) = edit.align {
        s.alignment = s.alignment.max(a);
        s.explicit_alignment = Some(s.explicit_alignment.unwrap_or(1).max(a));
        s.size = align_up(s.size, s.alignment);
    }
    if let Some(size) = edit.size {
        s.size = size;
    }
    finish(&mut s);
    Ok(s)
}

/// `s` with the member edits of `edit` made, in this order: growths, inserts,
/// alignments, moves. A member is found at any depth of the anonymous structs and
/// unions of `s` (`nested::find`); the edit is made in the aggregate that declares
/// it, and the aggregates around it are laid out again.
fn edit_members<'d>(
    s: &StructLayout<'d>,
    name: &str,
    edit: &StructEdit<'_>,
    aligns: &Aligns,
) -> Result<StructLayout<'d>, PredictError> {
    let mut s = s.clone();
    let mut deep = false;
    for g in &edit.members {
        let path = nested::find(&s, name, g.member)?;
        deep |= path.len() > 1;
        s = nested::within(&s, &path, aligns, &mut |agg, idx| {
            let mut sizes = FxHashMap::default();
            let m = &agg.members[idx];
            sizes.insert(
                idx,
                (m.size.saturating_add(g.grow), member_align(m, aligns)),
            );
            Ok(relay(agg, &sizes, aligns))
        })?;
    }
    for ins in &edit.inserts {
        if nested::declares(&s, ins.member) {
            return Err(PredictError::MemberExists {
                name: name.to_string(),
                member: ins.member.to_string(),
            });
        }
        // After a member: in the aggregate that declares it. First or at an offset:
        // in the struct itself.
        let path = match ins.at {
            InsertAt::After(x) => nested::find(&s, name, x)?,
            _ => vec![0],
        };
        deep |= path.len() > 1;
        s = nested::within(&s, &path, aligns, &mut |agg, _| {
            insert(agg, name, ins, aligns)
        })?;
    }
    for &(member, align) in &edit.member_aligns {
        let path = nested::find(&s, name, member)?;
        deep |= path.len() > 1;
        s = nested::within(&s, &path, aligns, &mut |agg, idx| {
            let mut sizes = FxHashMap::default();
            let m = &agg.members[idx];
            sizes.insert(idx, (m.size, member_align(m, aligns).max(align)));
            let mut r = relay(agg, &sizes, aligns);
            let m = &mut r.members[idx];
            m.alignment = Some(m.alignment.unwrap_or(1).max(saturate_u32(align)));
            Ok(r)
        })?;
    }
    for mv in &edit.moves {
        let path = nested::find(&s, name, mv.member)?;
        let after = match mv.after {
            Some(a) => {
                let to = nested::find(&s, name, a)?;
                if to[..to.len() - 1] != path[..path.len() - 1] {
                    return Err(PredictError::MoveAcross {
                        name: name.to_string(),
                        member: mv.member.to_string(),
                        holder: nested::holder(&s, &path),
                        after: a.to_string(),
                        after_holder: nested::holder(&s, &to),
                    });
                }
                to.last().copied()
            }
            None => None,
        };
        deep |= path.len() > 1;
        s = nested::within(&s, &path, aligns, &mut |agg, idx| {
            Ok(reorder(agg, idx, after, aligns))
        })?;
    }
    if deep {
        nested::recount_holes(&mut s);
    }
    Ok(s)
}

/// `s` laid out again with every member of type `name` (or array of it) at `shape`;
/// `None` when it has none.
fn embed<'d>(
    s: &StructLayout<'d>,
    name: &str,
    shape: Shape,
    aligns: &Aligns,
) -> Option<StructLayout<'d>> {
    let mut sizes = FxHashMap::default();
    // Anonymous aggregates laid inline whose own size changes, by member index: `s`
    // is copied only when it embeds `name` (most structs do not, and each is asked).
    let mut inners = Vec::new();
    for (idx, m) in s.members.iter().enumerate() {
        if let Some(nested) = &m.nested
            && let Some(inner) = embed(nested, name, shape, aligns)
        {
            sizes.insert(idx, (inner.size, member_align(m, aligns).max(shape.align)));
            inners.push((idx, inner));
            continue;
        }
        if !holds(m, name) {
            continue;
        }
        let count: u64 = m
            .ctype
            .dims
            .iter()
            .fold(1u64, |a, &d| a.saturating_mul(d))
            .max(1);
        let count = if m.ctype.dims.contains(&0) { 0 } else { count };
        sizes.insert(
            idx,
            (
                count.saturating_mul(shape.size),
                member_align(m, aligns).max(shape.align),
            ),
        );
    }
    if sizes.is_empty() {
        return None;
    }
    let mut out = s.clone();
    for (idx, inner) in inners {
        out.members[idx].nested = Some(Box::new(inner));
    }
    let mut next = relay(&out, &sizes, aligns);
    finish(&mut next);
    Some(next)
}

/// Whether a member's storage is a `name` by value (or an array of them).
fn holds(m: &Member<'_>, name: &str) -> bool {
    held_by_value(m) == Some(name)
}

/// The struct or union name a member's storage is by value (or an array of), if any.
fn held_by_value<'m>(m: &'m Member<'_>) -> Option<&'m str> {
    let t = &m.ctype;
    let by_value = match t.kind {
        TypeKind::Struct | TypeKind::Union => true,
        TypeKind::Array => matches!(t.element, TypeKind::Struct | TypeKind::Union),
        _ => false,
    };
    t.aggregate.as_deref().filter(|_| by_value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CType, TypeKind};
    use std::sync::Arc;

    /// A member holding `struct NAME` by value at `offset`.
    fn holding(member: &'static str, name: &str, offset: u64, size: u64) -> Member<'static> {
        Member {
            ctype: Arc::new(CType {
                kind: TypeKind::Struct,
                aggregate: Some(name.into()),
                c: format!("struct {name}").into(),
                ..CType::default()
            })
            .into(),
            ..Member::test_scalar(member, offset, size, 4)
        }
    }

    fn layout(
        name: &'static str,
        size: u64,
        members: Vec<Member<'static>>,
    ) -> StructLayout<'static> {
        StructLayout {
            name,
            size,
            alignment: 4,
            members,
            ..StructLayout::default()
        }
    }

    /// `struct inner { int a; }` grows from 4 to 8 bytes. `outer` holds it inside an
    /// anonymous struct before `int b`, `wrap` holds `outer`, `other` holds neither:
    /// the growth reaches `outer` through its anonymous struct, then `wrap`, and only
    /// them, as laying out every struct again would find.
    #[test]
    fn a_growth_reaches_the_holders_of_a_name_at_any_depth_and_no_other() {
        let mut anonymous = Member::test_scalar("", 0, 4, 4);
        anonymous.name = None;
        anonymous.nested = Some(Box::new(layout("", 4, vec![holding("x", "inner", 0, 4)])));
        let mut image = crate::model::Image::test_empty();
        image.structs = [
            layout("inner", 4, vec![Member::test_scalar("a", 0, 4, 4)]),
            layout("other", 4, vec![Member::test_scalar("c", 0, 4, 4)]),
            layout(
                "outer",
                8,
                vec![anonymous, Member::test_scalar("b", 4, 4, 4)],
            ),
            layout(
                "wrap",
                12,
                vec![
                    holding("o", "outer", 0, 8),
                    Member::test_scalar("d", 8, 4, 4),
                ],
            ),
        ]
        .into_iter()
        .map(Arc::new)
        .collect();
        let relaid: Relaid<'_> = FxHashMap::default();
        let held = holders(&image, &relaid);
        assert_eq!(held.get("inner"), Some(&vec![StructId(2)]));
        assert_eq!(held.get("outer"), Some(&vec![StructId(3)]));
        assert_eq!(held.len(), 2);
        let mut edits = FxHashMap::default();
        edits.insert(
            "inner".to_string(),
            StructEdit {
                size: Some(8),
                ..StructEdit::default()
            },
        );
        let (relaid, shapes) = propagate(&image, &edits).unwrap();
        let mut sizes: Vec<(usize, u64)> = relaid.iter().map(|(id, s)| (id.0, s.size)).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![(0, 8), (2, 12), (3, 16)]);
        let b = relaid[&StructId(2)].members[1].offset;
        assert_eq!(b, 8);
        let mut named: Vec<(&str, u64)> =
            shapes.iter().map(|(n, s)| (n.as_str(), s.size)).collect();
        named.sort_unstable();
        assert_eq!(named, vec![("inner", 8), ("outer", 12), ("wrap", 16)]);
    }
}
