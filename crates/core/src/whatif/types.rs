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
    // it embeds; the walk ends because a changed name is queued once).
    let mut queued: FxHashSet<String> = pending.iter().cloned().collect();
    while let Some(name) = pending.pop() {
        let shape = shapes[&name];
        for (i, _) in image.structs.iter().enumerate() {
            let id = StructId(i);
            let current = relaid
                .get(&id)
                .cloned()
                .unwrap_or_else(|| image.struct_by_id(id).clone());
            if current.name == name {
                continue;
            }
            let Some(next) = embed(&current, &name, shape, &aligns) else {
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
    let mut out = s.clone();
    for (idx, m) in s.members.iter().enumerate() {
        if let Some(nested) = &m.nested
            && let Some(inner) = embed(nested, name, shape, aligns)
        {
            // An anonymous aggregate laid inline: its own size changes.
            let grown = inner.size;
            out.members[idx].nested = Some(Box::new(inner));
            sizes.insert(idx, (grown, member_align(m, aligns).max(shape.align)));
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
    let mut next = relay(&out, &sizes, aligns);
    finish(&mut next);
    Some(next)
}

/// Whether a member's storage is a `name` by value (or an array of them).
fn holds(m: &Member<'_>, name: &str) -> bool {
    let t = &m.ctype;
    let by_value = match t.kind {
        TypeKind::Struct | TypeKind::Union => true,
        TypeKind::Array => matches!(t.element, TypeKind::Struct | TypeKind::Union),
        _ => false,
    };
    by_value && t.aggregate.as_deref() == Some(name)
}
