//! One struct or union laid out again after an edit of its members: a member at a
//! new size or alignment and the members after it at their alignments (`relay`), a
//! member declared elsewhere (`reorder`), a member inserted (`insert`). `types.rs`
//! carries the result to every struct that embeds it; `nested.rs` applies these to
//! the anonymous aggregates around a member.

use rustc_hash::FxHashMap;

use super::error::PredictError;
use crate::layout::holes;
use crate::link::align::{align_up, element_kind, scalar_alignment};
use crate::model::{AggregateKind, Member, StructLayout, TypeKind, saturate_u32};

/// Where an inserted member is declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertAt<'a> {
    /// Before every member.
    First,
    /// Right after this member (and the bitfields sharing its storage).
    After(&'a str),
    /// Before the first member at this byte offset or after it.
    Offset(u64),
}

/// A member inserted: `size` bytes aligned to `align`, declared at `at`.
#[derive(Debug, Clone)]
pub struct MemberInsert<'a> {
    /// The new member's name.
    pub member: &'a str,
    /// Its size in bytes.
    pub size: u64,
    /// Its alignment.
    pub align: u64,
    /// Where it is declared.
    pub at: InsertAt<'a>,
}

fn member_index(s: &StructLayout<'_>, name: &str, member: &str) -> Result<usize, PredictError> {
    s.members
        .iter()
        .position(|m| m.name == Some(member))
        .ok_or_else(|| PredictError::NoMember {
            name: name.to_string(),
            member: member.to_string(),
        })
}

/// `s` with the storage unit of member `idx` (the member and those sharing its bytes:
/// bitfields of one unit) declared right after the unit of member `after` (first when
/// `None`), and every unit laid out again in the new order at its alignment, keeping
/// the bytes each had beyond its alignment. A union is returned as it is.
pub fn reorder<'d>(
    s: &StructLayout<'d>,
    idx: usize,
    after: Option<usize>,
    aligns: &Aligns,
) -> StructLayout<'d> {
    if s.kind == AggregateKind::Union || s.members.is_empty() {
        return s.clone();
    }
    // Storage units: runs of members that start inside the bytes of the one before.
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut end = 0u64;
    for (i, m) in s.members.iter().enumerate() {
        match units.last_mut() {
            Some(u) if m.offset < end => u.push(i),
            _ => units.push(vec![i]),
        }
        end = end.max(m.offset.saturating_add(m.size));
    }
    let unit_of = |i: usize| units.iter().position(|u| u.contains(&i));
    let (Some(from), to) = (unit_of(idx), after.and_then(unit_of)) else {
        return s.clone();
    };
    if Some(from) == to {
        return s.clone();
    }
    // Each unit's start, end, alignment and slack (bytes before it beyond alignment).
    let mut info = Vec::with_capacity(units.len());
    let mut prev_end = 0u64;
    for u in &units {
        let start = s.members[u[0]].offset;
        let stop = u
            .iter()
            .map(|&i| s.members[i].offset.saturating_add(s.members[i].size))
            .max()
            .unwrap_or(start);
        let align = u
            .iter()
            .map(|&i| member_align(&s.members[i], aligns))
            .max()
            .unwrap_or(1);
        let slack = start.saturating_sub(align_up(prev_end, align));
        info.push((start, stop, align, slack));
        prev_end = stop;
    }
    let mut order: Vec<usize> = (0..units.len()).filter(|&u| u != from).collect();
    let at = match to {
        Some(t) => order
            .iter()
            .position(|&u| u == t)
            .map_or(order.len(), |p| p + 1),
        None => 0,
    };
    order.insert(at, from);
    let mut out = s.clone();
    out.members.clear();
    let mut new_end = 0u64;
    for &u in &order {
        let (start, stop, align, slack) = info[u];
        // A moved unit (and the one it now follows) keeps no slack: its old bytes
        // before it belonged to its old neighbour.
        let slack = if u == from { 0 } else { slack };
        let at = align_up(new_end, align).saturating_add(slack);
        let delta = i128::from(at) - i128::from(start);
        for &i in &units[u] {
            let mut m = s.members[i].clone();
            shift_nested(&mut m, delta);
            m.offset = (i128::from(m.offset) + delta).max(0) as u64;
            out.members.push(m);
        }
        new_end = at.saturating_add(stop - start);
    }
    let tail = s.size.saturating_sub(align_up(prev_end, s.alignment));
    out.size = align_up(new_end, s.alignment).saturating_add(tail);
    finish(&mut out);
    out
}

/// `s` with a new member declared at `ins.at`: the members after it move to their
/// alignments, as growth moves them. It lands at the first offset its alignment
/// allows after the member before it (a hole before the offset asked for stays a
/// hole only if the alignment says so). An offset inside a member is refused.
pub fn insert<'d>(
    s: &StructLayout<'d>,
    name: &str,
    ins: &MemberInsert<'_>,
    aligns: &Aligns,
) -> Result<StructLayout<'d>, PredictError> {
    if s.members.iter().any(|m| m.name == Some(ins.member)) {
        return Err(PredictError::MemberExists {
            name: name.to_string(),
            member: ins.member.to_string(),
        });
    }
    let union = s.kind == AggregateKind::Union;
    let idx = match ins.at {
        InsertAt::First => 0,
        InsertAt::After(x) => {
            let i = member_index(s, name, x)?;
            let end = s.members[i].offset.saturating_add(s.members[i].size);
            let shared = s.members[i + 1..]
                .iter()
                .take_while(|m| !union && m.offset < end)
                .count();
            i + 1 + shared
        }
        InsertAt::Offset(off) => {
            if off > s.size {
                return Err(PredictError::OffsetPastEnd {
                    name: name.to_string(),
                    size: s.size,
                    offset: off,
                });
            }
            if let Some(m) = s
                .members
                .iter()
                .find(|m| m.offset < off && off < m.offset.saturating_add(m.size))
            {
                return Err(PredictError::OffsetInsideMember {
                    name: name.to_string(),
                    offset: off,
                    member: m.name.unwrap_or("(anonymous)").to_string(),
                    start: m.offset,
                    end: m.offset.saturating_add(m.size),
                });
            }
            s.members
                .iter()
                .position(|m| m.offset >= off)
                .unwrap_or(s.members.len())
        }
    };
    let before = s.members[..idx]
        .iter()
        .map(|m| m.offset.saturating_add(m.size))
        .max()
        .unwrap_or(0);
    let mut with = s.clone();
    with.members.insert(
        idx,
        Member {
            // The model borrows names from the build; a name the user gives lives as
            // long as the process (one per --insert).
            name: Some(Box::leak(ins.member.to_string().into_boxed_str())),
            ctype: std::sync::Arc::new(inserted_type(ins.size, ins.align)).into(),
            // Empty at the end of the member before it, then given its size: what
            // follows keeps the bytes it had beyond its alignment.
            offset: if union { 0 } else { before },
            size: 0,
            natural_alignment: saturate_u32(ins.align),
            ..Member::default()
        },
    );
    let mut sizes = FxHashMap::default();
    sizes.insert(idx, (ins.size, ins.align.max(1)));
    Ok(relay(&with, &sizes, aligns))
}

/// The type of an inserted member: an unsigned scalar when its size is its
/// alignment and 1, 2, 4 or 8, else an array of bytes.
fn inserted_type(size: u64, align: u64) -> crate::model::CType {
    use crate::model::CType;
    if size == align && matches!(size, 1 | 2 | 4 | 8) {
        CType {
            kind: TypeKind::Base,
            c: format!("u{}", size * 8).into(),
            ..CType::default()
        }
    } else {
        CType {
            kind: TypeKind::Array,
            element: TypeKind::Base,
            dims: vec![size],
            c: format!("unsigned char[{size}]").into(),
            ..CType::default()
        }
    }
}

/// Alignment of each struct and union name, for members of those types.
pub type Aligns = FxHashMap<String, u64>;

/// A member's alignment: what the source asked, else its type's: an anonymous
/// struct or union laid inline, its own (its largest member's); its struct's (from
/// `aligns`), else one element's size up to 8 (pointers 8).
pub(super) fn member_align(m: &Member<'_>, aligns: &Aligns) -> u64 {
    let natural = if let Some(n) = &m.nested {
        n.alignment.max(u64::from(m.natural_alignment))
    } else if m.natural_alignment > 0 {
        u64::from(m.natural_alignment)
    } else {
        let t = &m.ctype;
        match (element_kind(t), t.aggregate.as_deref()) {
            (TypeKind::Struct | TypeKind::Union, Some(name)) => {
                aligns.get(name).copied().unwrap_or(1)
            }
            _ => scalar_alignment(t, m.size, 8),
        }
    };
    u64::from(m.alignment.unwrap_or(0)).max(natural).max(1)
}

/// `s` with the members in `sizes` (top-level index -> new size and alignment) at
/// their new sizes and every member after them where the compiler puts it: at the
/// next multiple of its alignment, plus any bytes its old place had beyond that.
/// Members sharing an offset (bitfields of one unit, overlapping storage) move
/// with the member they share it with. A union's members stay at 0.
pub fn relay<'d>(
    s: &StructLayout<'d>,
    sizes: &FxHashMap<usize, (u64, u64)>,
    aligns: &Aligns,
) -> StructLayout<'d> {
    let mut out = s.clone();
    let (mut old_end, mut new_end, mut shift, mut max_align) = (0u64, 0u64, 0i128, s.alignment);
    let union = s.kind == AggregateKind::Union;
    for (idx, m) in s.members.iter().enumerate() {
        let was = member_align(m, aligns);
        let (size, align) = sizes.get(&idx).copied().unwrap_or((m.size, was));
        max_align = max_align.max(align);
        let offset = if union {
            m.offset
        } else if m.offset < old_end {
            // Inside the storage of the member before: moves with it.
            (i128::from(m.offset) + shift).max(0) as u64
        } else {
            let slack = m.offset.saturating_sub(align_up(old_end, was));
            let at = align_up(new_end, align).saturating_add(slack);
            shift = i128::from(at) - i128::from(m.offset);
            at
        };
        let delta = i128::from(offset) - i128::from(m.offset);
        let mut nm = out.members[idx].clone();
        shift_nested(&mut nm, delta);
        nm.offset = offset;
        nm.size = size;
        old_end = old_end.max(m.offset.saturating_add(m.size));
        new_end = new_end.max(offset.saturating_add(size));
        out.members[idx] = nm;
    }
    let tail = s.size.saturating_sub(align_up(old_end, s.alignment));
    out.alignment = max_align;
    out.size = align_up(new_end, max_align).saturating_add(tail);
    out
}

/// Moves the members of an anonymous aggregate laid inline by `delta` bytes (their
/// offsets count from the outermost struct).
fn shift_nested(m: &mut Member<'_>, delta: i128) {
    if delta == 0 {
        return;
    }
    if let Some(n) = &mut m.nested {
        for inner in &mut n.members {
            inner.offset = (i128::from(inner.offset) + delta).max(0) as u64;
            shift_nested(inner, delta);
        }
    }
}

/// Holes and padding counted again, as the loader counts them.
pub(super) fn finish(s: &mut StructLayout<'_>) {
    holes::fill(s, 0);
    holes::attribute(s, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &'static str, offset: u64, size: u64, align: u32) -> Member<'static> {
        Member::test_scalar(name, offset, size, align)
    }

    /// struct t { char a; long b; int c; }: a at 0, b at 8, c at 16, 24 B.
    fn abc() -> StructLayout<'static> {
        StructLayout {
            name: "t",
            size: 24,
            alignment: 8,
            members: vec![
                member("a", 0, 1, 1),
                member("b", 8, 8, 8),
                member("c", 16, 4, 4),
            ],
            ..StructLayout::default()
        }
    }

    /// struct { char a; long b; int c; } grown at `a` by 8: b and c move by 8, the
    /// size grows by 8.
    #[test]
    fn members_after_a_grown_one_move_to_their_alignment() {
        let s = abc();
        let mut sizes = FxHashMap::default();
        sizes.insert(0, (9, 1));
        let r = relay(&s, &sizes, &Aligns::default());
        let got: Vec<(u64, u64)> = r.members.iter().map(|m| (m.offset, m.size)).collect();
        assert_eq!(got, vec![(0, 9), (16, 8), (24, 4)]);
        assert_eq!(r.size, 32);
        // Growth that fits the hole moves nothing: a to 7 bytes, b stays at 8.
        sizes.insert(0, (7, 1));
        let r = relay(&s, &sizes, &Aligns::default());
        assert_eq!(r.members[1].offset, 8);
        assert_eq!(r.size, 24);
    }

    /// struct t { char a; long b; int c; } (24 B: a at 0, b at 8, c at 16, 4 B of
    /// padding), a member inserted:
    /// - `short x` after a: x at align_up(1, 2) = 2, in the hole; b stays at 8, 24 B;
    /// - 4 B aligned 4 at offset 8 (before b): after a at align_up(1, 4) = 4, b stays;
    /// - 8 B aligned 8 first: x at 0, a at 8, b at align_up(9, 8) = 16, c at 24,
    ///   size align_up(28, 8) = 32;
    /// - 12 B aligned 4 after c: x at 20, end 32, size 32 (the padding is gone).
    #[test]
    fn an_inserted_member_lands_at_its_alignment_and_pushes_what_follows() {
        let s = abc();
        let a = Aligns::default();
        let got = |at: InsertAt<'_>, size: u64, align: u64| {
            let r = insert(
                &s,
                "t",
                &MemberInsert {
                    member: "x",
                    size,
                    align,
                    at,
                },
                &a,
            )
            .unwrap();
            let offsets: Vec<(&str, u64)> = r
                .members
                .iter()
                .map(|m| (m.name.unwrap(), m.offset))
                .collect();
            (offsets, r.size)
        };
        assert_eq!(
            got(InsertAt::After("a"), 2, 2),
            (vec![("a", 0), ("x", 2), ("b", 8), ("c", 16)], 24)
        );
        assert_eq!(
            got(InsertAt::Offset(8), 4, 4),
            (vec![("a", 0), ("x", 4), ("b", 8), ("c", 16)], 24)
        );
        assert_eq!(
            got(InsertAt::First, 8, 8),
            (vec![("x", 0), ("a", 8), ("b", 16), ("c", 24)], 32)
        );
        assert_eq!(
            got(InsertAt::After("c"), 12, 4),
            (vec![("a", 0), ("b", 8), ("c", 16), ("x", 20)], 32)
        );
        let err = |at: InsertAt<'_>, member: &str| {
            insert(
                &s,
                "t",
                &MemberInsert {
                    member,
                    size: 4,
                    align: 4,
                    at,
                },
                &a,
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            err(InsertAt::Offset(10), "x"),
            "struct t: offset 10 is inside member b (bytes 8..16)"
        );
        assert_eq!(
            err(InsertAt::Offset(25), "x"),
            "struct t is 24 bytes: no offset 25 in it"
        );
        assert_eq!(
            err(InsertAt::First, "b"),
            "struct t already has a member \"b\""
        );
        // union { char a; long b; int c; } (8 B): 12 B inserted at 0 makes it
        // align_up(12, 8) = 16 B.
        let u = StructLayout {
            kind: AggregateKind::Union,
            size: 8,
            members: vec![
                member("a", 0, 1, 1),
                member("b", 0, 8, 8),
                member("c", 0, 4, 4),
            ],
            ..s.clone()
        };
        let r = insert(
            &u,
            "t",
            &MemberInsert {
                member: "x",
                size: 12,
                align: 4,
                at: InsertAt::First,
            },
            &a,
        )
        .unwrap();
        assert_eq!(
            (r.members[0].offset, r.members[0].size, r.size),
            (0, 12, 16)
        );
    }

    /// struct { char name[48]; long extra[2]; long head; long tail; } (80 B): moving
    /// `extra` after `tail` puts head and tail back at 48 and 56 (line 0); moving
    /// `tail` first puts it at 0.
    #[test]
    fn a_moved_member_and_those_after_it_take_their_new_places() {
        let s = StructLayout {
            name: "msg_queue",
            size: 80,
            alignment: 8,
            members: vec![
                member("name", 0, 48, 1),
                member("extra", 48, 16, 8),
                member("head", 64, 8, 8),
                member("tail", 72, 8, 8),
            ],
            ..StructLayout::default()
        };
        let a = Aligns::default();
        let offsets = |r: &StructLayout<'static>| -> Vec<(&'static str, u64)> {
            r.members
                .iter()
                .map(|m| (m.name.unwrap(), m.offset))
                .collect()
        };
        let r = reorder(&s, 1, Some(3), &a);
        let got = offsets(&r);
        assert_eq!(
            got,
            vec![("name", 0), ("head", 48), ("tail", 56), ("extra", 64)]
        );
        assert_eq!(r.size, 80);
        let r = reorder(&s, 3, None, &a);
        let got = offsets(&r);
        assert_eq!(
            got,
            vec![("tail", 0), ("name", 8), ("extra", 56), ("head", 72)]
        );
        assert_eq!(r.size, 80);
        // Moving a member after itself changes nothing.
        assert_eq!(reorder(&s, 2, Some(2), &a).members[2].offset, 64);
    }
}
