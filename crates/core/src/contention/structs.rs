//! The parts of a struct type that frequent code touches, from the typed access map:
//! every instance, reached through a pointer of the type, an instance taken as starting
//! a line. One part per (offset, size, member path) an access has, with the frequent
//! functions writing and reading it.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::meet::{Part, Touch};
use crate::evidence::frequency::{Frequencies, Frequency, Seldom};
use crate::model::Image;
use crate::model::typed::{NONE, TypedAccess};

/// Which typed accesses of a type count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Through {
    /// Every access, per-CPU objects' included (the diff's judgement of struct lines).
    Any,
    /// Accesses through a pointer to some instance, not through a per-CPU object (the
    /// audit finds those among the per-CPU data).
    Pointers,
}

/// The parts of struct `name` that frequent code touches, by (offset, size, path), with
/// their frequent writers and readers (a writer is never among the readers).
pub fn type_parts<'a>(
    image: &'a Image<'_>,
    freq: &Frequencies,
    name: &str,
    through: Through,
) -> Vec<Part<'a>> {
    let map = &image.typed;
    let mut parts: BTreeMap<(u64, u64, &'a str), Part<'a>> = BTreeMap::new();
    for a in map.of_type(name) {
        if through == Through::Pointers && a.percpu != NONE {
            continue;
        }
        let class = frequency_of(freq, a);
        if !class.is_frequent() {
            continue;
        }
        let Some(member) = map.member(a) else {
            continue;
        };
        let (from, to) = (
            u64::from(a.offset),
            u64::from(a.offset) + u64::from(a.size.max(1)),
        );
        let part = parts
            .entry((from, to, member))
            .or_insert_with(|| Part::new(Cow::Borrowed(member), NONE, from, to));
        let touch = Touch {
            function: a.function,
            class,
            remote: a.remote,
            shared: shared_write(a, member),
        };
        part.add(touch, a.kind.writes());
    }
    let mut out: Vec<Part<'a>> = parts.into_values().collect();
    out.iter_mut().for_each(Part::settle);
    out
}

/// Whether access `a` to member `path` is a write other CPUs contend with by design: an
/// atomic (a `lock` prefix, `xchg`), or `spin_unlock()`'s one-byte store to a queued
/// spinlock's `locked` byte. An object one CPU owns (on a stack, a call's arguments, a
/// task's saved registers, one being built) is written with plain stores, an atomic's
/// and a lock's initial value included.
pub fn shared_write(a: &TypedAccess, path: &str) -> bool {
    use crate::model::access::AccessKind;
    a.kind == AccessKind::Atomic
        || (a.kind == AccessKind::Write
            && a.size == 1
            && path.split(" | ").any(|p| p.ends_with("raw_lock.locked")))
}

/// How often the function of `a` runs; an access in a `.cold` part is rare whatever
/// its function.
pub fn frequency_of(freq: &Frequencies, a: &TypedAccess) -> Frequency {
    match a.cold {
        true => Frequency::Rare(Seldom::Cold),
        false => freq.get(a.function),
    }
}
