//! One compile unit's types as the typed scan needs them: what a pointer points to,
//! and which member (path and type) of a struct, union or array holds a byte offset.
//! Keyed by unit offset, so the functions of the unit read their own DWARF's types.

use std::cell::Cell;

use rustc_hash::FxHashMap;

use crate::model::typed::NONE;

/// A name, found in its string section only when asked for (most are never printed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Name<'d> {
    None,
    /// At an offset of `.debug_str`.
    Str(u64),
    /// At an offset of `.debug_line_str`.
    LineStr(u64),
    /// Inline in `.debug_info`, or resolved already.
    Bytes(&'d [u8]),
}

impl Name<'_> {
    pub fn is_some(&self) -> bool {
        !matches!(self, Name::None)
    }

    /// This name, else `other`.
    pub fn or(self, other: Self) -> Self {
        if self.is_some() { self } else { other }
    }
}

/// A type entry, reduced to what following pointers and finding members needs.
#[derive(Debug, Clone, Copy)]
pub(super) enum Node<'d> {
    /// A typedef (`name`) or a qualifier (`const`, `volatile`, ...) of `target`.
    Alias { target: u32, name: Name<'d> },
    /// A pointer to `target` (`NONE`: `void *`).
    Pointer(u32),
    /// A struct or union: its members are `Types::members[first..first + len]`.
    Aggregate {
        name: Name<'d>,
        union: bool,
        size: u32,
        first: u32,
        len: u32,
    },
    /// An array of `count` elements of `elem` (the first dimension; `inner` is the
    /// product of the others).
    Array { elem: u32, count: u32, inner: u32 },
    /// A base type or an enumeration of `size` bytes.
    Base { size: u32, name: Name<'d> },
    /// Anything else (a function type, an unspecified type).
    Other,
}

/// A member of an aggregate.
#[derive(Debug, Clone)]
pub(super) struct MemberNode<'d> {
    pub name: Name<'d>,
    pub offset: u32,
    pub ty: u32,
    /// The member's size in bytes, found on first use (`UNSIZED` until then).
    pub size: Cell<u32>,
    /// A bitfield's first bit (from the start of the aggregate) and width.
    pub bits: Option<(u32, u32)>,
}

/// The bytes an access touches, relative to the type it is looked up in, and the bits
/// an immediate operand selects in them (`testb $0x10`, `andb $0xdf`), bit 0 the
/// lowest of the first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Span {
    pub offset: u64,
    pub size: u64,
    pub mask: Option<u64>,
}

/// What holds a byte of a type: its member path, and the type of the innermost
/// scalar or pointer that holds it (`NONE`: padding, or an aggregate's hole).
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub path: String,
    pub leaf: u32,
}

/// A unit's types.
#[derive(Debug, Default)]
pub(super) struct Types<'d> {
    pub nodes: FxHashMap<u32, Node<'d>>,
    pub members: Vec<MemberNode<'d>>,
    /// `.debug_str` and `.debug_line_str`, where names are.
    pub strings: (&'d [u8], &'d [u8]),
}

/// A member whose size is not found yet.
pub(super) const UNSIZED: u32 = u32::MAX;

/// How deep aliases and nested members are followed (a loop in bad DWARF stops).
const DEPTH: usize = 16;

impl<'d> Types<'d> {
    /// `ty` with typedefs and qualifiers taken off, and the last typedef's name met.
    pub fn strip(&self, mut ty: u32) -> (u32, Name<'d>) {
        let mut named = Name::None;
        for _ in 0..DEPTH {
            match self.nodes.get(&ty) {
                Some(Node::Alias { target, name }) => {
                    named = named.or(*name);
                    ty = *target;
                }
                _ => return (ty, named),
            }
        }
        (NONE, Name::None)
    }

    /// The text of `name`, `None` when absent or not UTF-8.
    pub fn text(&self, name: Name<'d>) -> Option<&'d str> {
        let (data, at) = match name {
            Name::None => return None,
            Name::Bytes(b) => return std::str::from_utf8(b).ok(),
            Name::Str(at) => (self.strings.0, at),
            Name::LineStr(at) => (self.strings.1, at),
        };
        let rest = data.get(usize::try_from(at).ok()?..)?;
        let end = memchr::memchr(0, rest)?;
        std::str::from_utf8(&rest[..end]).ok()
    }

    /// What a pointer of type `ty` points to (stripped), `None` when `ty` is no pointer
    /// or points to `void`.
    pub fn pointee(&self, ty: u32) -> Option<u32> {
        let (ty, _) = self.strip(ty);
        match self.nodes.get(&ty)? {
            Node::Pointer(target) if *target != NONE => {
                let (target, _) = self.strip(*target);
                (target != NONE).then_some(target)
            }
            _ => None,
        }
    }

    /// The name of a stripped type reached through `ty` (a struct's tag, else the
    /// typedef's name, else a base type's name).
    pub fn name(&self, ty: u32, alias: Name<'d>) -> Option<&'d str> {
        let name = match self.nodes.get(&ty)? {
            Node::Aggregate { name, .. } | Node::Base { name, .. } => name.or(alias),
            _ => alias,
        };
        self.text(name)
    }

    /// Whether `ty` (stripped) is a struct or union.
    pub fn is_aggregate(&self, ty: u32) -> bool {
        matches!(self.nodes.get(&ty), Some(Node::Aggregate { .. }))
    }

    /// The size of `ty` in bytes, when known.
    pub fn size(&self, ty: u32) -> Option<u64> {
        let (ty, _) = self.strip(ty);
        match self.nodes.get(&ty)? {
            Node::Pointer(_) => Some(8),
            Node::Aggregate { size, .. } | Node::Base { size, .. } => Some(u64::from(*size)),
            Node::Array {
                elem, count, inner, ..
            } => Some(self.size(*elem)? * u64::from(*count) * u64::from(*inner)),
            _ => None,
        }
    }

    /// The members of the stripped aggregate `ty`.
    fn members_of(&self, ty: u32) -> &[MemberNode<'d>] {
        match self.nodes.get(&ty) {
            Some(Node::Aggregate { first, len, .. }) => {
                let from = *first as usize;
                self.members.get(from..from + *len as usize).unwrap_or(&[])
            }
            _ => &[],
        }
    }

    /// What holds byte `offset` of the stripped type `ty`: the member path (the
    /// alternatives of a union joined by ` | `) and the innermost type.
    pub fn held(&self, ty: u32, offset: u64) -> Held {
        self.held_span(
            ty,
            Span {
                offset,
                size: 1,
                mask: None,
            },
        )
    }

    /// What holds the bytes of `span` of the stripped type `ty`: one member's path, or
    /// several joined by ` + ` when the access spans them (a struct copy, a bitfield
    /// load), the alternatives of a union by ` | `.
    pub fn held_span(&self, ty: u32, span: Span) -> Held {
        let mut path = String::new();
        let leaf = self.descend(ty, span, &mut path, 0);
        Held { path, leaf }
    }

    fn descend(&self, ty: u32, span: Span, path: &mut String, depth: usize) -> u32 {
        let (ty, _) = self.strip(ty);
        if depth > DEPTH {
            return NONE;
        }
        match self.nodes.get(&ty) {
            Some(Node::Aggregate { union, .. }) => {
                let members = self.members_of(ty);
                let mut touched: Vec<&MemberNode<'d>> =
                    members.iter().filter(|m| self.overlaps(m, span)).collect();
                // A bitfield's bits named by the operand's mask.
                if let Some(mask) = span.mask {
                    let selected: Vec<&MemberNode<'d>> = touched
                        .iter()
                        .copied()
                        .filter(|m| bit_range(m, span).is_some_and(|b| b & mask != 0))
                        .collect();
                    if !selected.is_empty() {
                        touched = selected;
                    }
                }
                // Members that hold the whole access, when some do.
                let whole: Vec<&MemberNode<'d>> = touched
                    .iter()
                    .copied()
                    .filter(|m| self.contains(m, span))
                    .collect();
                if !whole.is_empty() && (*union || whole.len() == 1) {
                    touched = whole;
                }
                if !*union && touched.len() > 1 && touched.iter().all(|m| m.bits.is_none()) {
                    // Overlapping plain members (a DWARF quirk): the last one wins.
                    if touched.iter().all(|m| self.contains(m, span)) {
                        touched.drain(..touched.len() - 1);
                    }
                }
                self.join(
                    &touched,
                    span,
                    path,
                    depth,
                    if *union { " | " } else { " + " },
                )
            }
            Some(Node::Array { elem, .. }) => {
                let stride = self.size(*elem).unwrap_or(0) * self.inner(ty);
                if stride == 0 {
                    return NONE;
                }
                path.push('[');
                path.push_str(itoa::Buffer::new().format(span.offset / stride));
                path.push(']');
                let inner = Span {
                    offset: span.offset % stride,
                    size: span.size.min(stride - span.offset % stride),
                    mask: span.mask,
                };
                self.descend(*elem, inner, path, depth + 1)
            }
            Some(Node::Pointer(_) | Node::Base { .. }) => ty,
            _ => NONE,
        }
    }

    fn inner(&self, ty: u32) -> u64 {
        match self.nodes.get(&ty) {
            Some(Node::Array { inner, .. }) => u64::from(*inner).max(1),
            _ => 1,
        }
    }

    /// Whether the stripped type `ty` is `inner`, or holds an `inner` (a member, an
    /// array element, nested at any depth) starting at byte `offset`.
    pub fn holds_type(&self, ty: u32, offset: u64, inner: u32) -> bool {
        self.holds_type_at(ty, offset, inner, 0)
    }

    fn holds_type_at(&self, ty: u32, offset: u64, inner: u32, depth: usize) -> bool {
        let (ty, _) = self.strip(ty);
        if ty == inner && offset == 0 {
            return true;
        }
        if depth > DEPTH {
            return false;
        }
        match self.nodes.get(&ty) {
            Some(Node::Aggregate { .. }) => self.members_of(ty).iter().any(|m| {
                self.overlaps(
                    m,
                    Span {
                        offset,
                        size: 1,
                        mask: None,
                    },
                ) && self.holds_type_at(m.ty, offset - u64::from(m.offset), inner, depth + 1)
            }),
            Some(Node::Array { elem, .. }) => {
                let stride = self.size(*elem).unwrap_or(0) * self.inner(ty);
                stride > 0 && self.holds_type_at(*elem, offset % stride, inner, depth + 1)
            }
            _ => false,
        }
    }

    /// The member's size, found once (a flexible array counts as unbounded).
    fn member_size(&self, m: &MemberNode<'d>) -> u64 {
        let mut size = m.size.get();
        if size == UNSIZED {
            let (t, _) = self.strip(m.ty);
            size = match self.flexible(t, 0) {
                true => UNSIZED - 1,
                false => u32::try_from(self.size(m.ty).unwrap_or(0)).unwrap_or(UNSIZED - 1),
            };
            m.size.set(size);
        }
        u64::from(size)
    }

    /// Whether the stripped type `ty` is a flexible array (`[]`, `[0]`), or an
    /// aggregate ending in one (`DECLARE_FLEX_ARRAY`'s struct): it runs past its size.
    /// Whether the stripped type `ty` ends in a flexible array (its bytes run past its
    /// size).
    pub fn runs_past(&self, ty: u32) -> bool {
        self.flexible(ty, 0)
    }

    fn flexible(&self, ty: u32, depth: usize) -> bool {
        match self.nodes.get(&ty) {
            Some(Node::Array { count: 0, .. }) => true,
            Some(Node::Aggregate { .. }) if depth < DEPTH => {
                self.members_of(ty).last().is_some_and(|m| {
                    let (t, _) = self.strip(m.ty);
                    self.flexible(t, depth + 1)
                })
            }
            _ => false,
        }
    }

    /// The bytes `[from, to)` member `m` takes (a bitfield: the bytes of its bits).
    fn bytes(&self, m: &MemberNode<'d>) -> (u64, u64) {
        match m.bits {
            Some((bit, width)) => (
                u64::from(bit) / 8,
                (u64::from(bit) + u64::from(width.max(1))).div_ceil(8),
            ),
            None => (
                u64::from(m.offset),
                u64::from(m.offset) + self.member_size(m),
            ),
        }
    }

    fn overlaps(&self, m: &MemberNode<'d>, span: Span) -> bool {
        let (from, to) = self.bytes(m);
        from < span.offset + span.size.max(1) && span.offset < to
    }

    fn contains(&self, m: &MemberNode<'d>, span: Span) -> bool {
        let (from, to) = self.bytes(m);
        from <= span.offset && span.offset + span.size.max(1) <= to
    }

    /// The paths of `members` joined by `sep`, each member stepped into with its part
    /// of the access; the leaf is the one member's, or a union's pointer alternative.
    fn join(
        &self,
        members: &[&MemberNode<'d>],
        span: Span,
        path: &mut String,
        depth: usize,
        sep: &str,
    ) -> u32 {
        let prefix = path.clone();
        let mut leaf = NONE;
        for (i, m) in members.iter().enumerate() {
            let mut one = prefix.clone();
            let l = self.step(m, span, &mut one, depth);
            if i == 0 {
                *path = one;
            } else {
                path.push_str(sep);
                path.push_str(&one);
            }
            let better =
                leaf == NONE || (self.pointee(l).is_some() && self.pointee(leaf).is_none());
            if sep == " | " && better || i == 0 {
                leaf = l;
            }
        }
        if sep == " + " && members.len() > 1 {
            return NONE;
        }
        leaf
    }

    fn step(&self, m: &MemberNode<'d>, span: Span, path: &mut String, depth: usize) -> u32 {
        if let Some(name) = self.text(m.name) {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(name);
        }
        if m.bits.is_some() {
            return NONE;
        }
        let at = u64::from(m.offset);
        let from = span.offset.max(at);
        let end = (span.offset + span.size.max(1)).min(at + self.member_size(m));
        let inner = Span {
            offset: from - at,
            size: end.saturating_sub(from).max(1),
            mask: (span.offset >= at).then_some(span.mask).flatten(),
        };
        self.descend(m.ty, inner, path, depth + 1)
    }
}

/// The bits of the access (bit 0 the lowest of its first byte) that bitfield `m`
/// takes; `None` for a member that is no bitfield.
fn bit_range(m: &MemberNode<'_>, span: Span) -> Option<u64> {
    let (bit, width) = m.bits?;
    let start = i64::from(bit) - (span.offset * 8) as i64;
    let mut mask = 0u64;
    for b in start..start + i64::from(width) {
        if (0..64).contains(&b) {
            mask |= 1 << b;
        }
    }
    Some(mask)
}
