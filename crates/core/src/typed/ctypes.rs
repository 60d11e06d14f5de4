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
        let mut path = String::new();
        let leaf = self.descend(ty, offset, &mut path, 0);
        Held { path, leaf }
    }

    fn descend(&self, ty: u32, offset: u64, path: &mut String, depth: usize) -> u32 {
        let (ty, _) = self.strip(ty);
        if depth > DEPTH {
            return NONE;
        }
        match self.nodes.get(&ty) {
            Some(Node::Aggregate { union: false, .. }) => {
                let Some(m) = self
                    .members_of(ty)
                    .iter()
                    .rev()
                    .find(|m| self.holds(m, offset))
                else {
                    return NONE;
                };
                self.step(m, offset, path, depth)
            }
            Some(Node::Aggregate { union: true, .. }) => {
                let prefix = path.clone();
                let mut leaf = NONE;
                let holding = self.members_of(ty).iter().filter(|m| self.holds(m, offset));
                for (alternatives, m) in holding.enumerate() {
                    let mut alternative = prefix.clone();
                    let l = self.step(m, offset, &mut alternative, depth);
                    if alternatives == 0 {
                        *path = alternative;
                    } else {
                        path.push_str(" | ");
                        path.push_str(&alternative);
                    }
                    if leaf == NONE || (self.pointee(l).is_some() && self.pointee(leaf).is_none()) {
                        leaf = l;
                    }
                }
                leaf
            }
            Some(Node::Array { elem, .. }) => {
                let stride = self.size(*elem).unwrap_or(0) * self.inner(ty);
                if stride == 0 {
                    return NONE;
                }
                path.push('[');
                path.push_str(itoa::Buffer::new().format(offset / stride));
                path.push(']');
                self.descend(*elem, offset % stride, path, depth + 1)
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
                self.holds(m, offset)
                    && self.holds_type_at(m.ty, offset - u64::from(m.offset), inner, depth + 1)
            }),
            Some(Node::Array { elem, .. }) => {
                let stride = self.size(*elem).unwrap_or(0) * self.inner(ty);
                stride > 0 && self.holds_type_at(*elem, offset % stride, inner, depth + 1)
            }
            _ => false,
        }
    }

    /// Whether member `m` holds byte `offset` of its aggregate.
    fn holds(&self, m: &MemberNode<'d>, offset: u64) -> bool {
        let at = u64::from(m.offset);
        let mut size = m.size.get();
        if size == UNSIZED {
            size = u32::try_from(self.size(m.ty).unwrap_or(0)).unwrap_or(UNSIZED - 1);
            m.size.set(size);
        }
        offset >= at && offset - at < u64::from(size)
    }

    fn step(&self, m: &MemberNode<'d>, offset: u64, path: &mut String, depth: usize) -> u32 {
        if let Some(name) = self.text(m.name) {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(name);
        }
        self.descend(m.ty, offset - u64::from(m.offset), path, depth + 1)
    }
}
