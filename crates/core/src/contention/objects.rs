//! The parts of data objects that frequent code touches, at their places: for global
//! objects, from the access map (each instruction's reference to an object); for
//! per-CPU objects, from the access map (`%gs:` operands, this CPU's copy) and the
//! typed access map (a per-CPU object reached through this CPU's offset or another's:
//! `remote`). A part is a member of the object's type (`show::members_on`'s names), or,
//! for an object without members, the bytes the operand touches.

use std::borrow::Cow;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::meet::{Part, Touch};
use super::structs::frequency_of;
use crate::evidence::frequency::Frequencies;
use crate::kernel::written_once;
use crate::model::access::AccessKind;
use crate::model::typed::NONE;
use crate::model::{Image, Space, Symbol, SymbolKind};
use crate::show::{MemberBytes, members_on};

/// One touch of an object found in the code: its bytes into the object (`None` for the
/// size: not known, the member at `offset` is meant), how, by whom.
struct Seen {
    object: u32,
    offset: u64,
    size: Option<u64>,
    writes: bool,
    touch: Touch,
}

/// The parts of the objects of `space` that frequent code touches, by place: zero-byte
/// symbols, boot code, indexed operands (the element is not known) and the writes of
/// once-only storage left out; an address handed to a function counts as a write of the
/// member it points at when that function writes through it, and not at all otherwise.
pub fn object_parts<'a>(image: &'a Image<'_>, freq: &Frequencies, space: Space) -> Vec<Part<'a>> {
    let mut seen = from_code(image, freq, space);
    if space == Space::Percpu {
        seen.extend(from_typed(image, freq));
    }
    seen.sort_by_key(|s| s.object);
    let mut parts: BTreeMap<(u64, u64, String), Part<'a>> = BTreeMap::new();
    let mut members: FxHashMap<u32, Vec<MemberBytes>> = FxHashMap::default();
    for s in &seen {
        let Some(sym) = tenant(image, s.object, space) else {
            continue;
        };
        let list = members
            .entry(s.object)
            .or_insert_with(|| members_on(image, sym, (0, sym.size)));
        for (name, from, to) in bytes_of(sym, list, s) {
            let (at, end) = (sym.place.saturating_add(from), sym.place.saturating_add(to));
            parts
                .entry((at, end, name.clone()))
                .or_insert_with(|| Part::new(Cow::Owned(name), s.object, at, end))
                .add(s.touch, s.writes);
        }
    }
    let mut out: Vec<Part<'a>> = parts.into_values().collect();
    out.iter_mut().for_each(Part::settle);
    out
}

/// Object `i` of `image` when it is a data object of `space` with bytes.
fn tenant<'a, 'd>(image: &'a Image<'d>, i: u32, space: Space) -> Option<&'a Symbol<'d>> {
    let s = image.symbols.get(i as usize)?;
    (s.size > 0 && s.space == space && s.kind != SymbolKind::Function).then_some(s)
}

/// The access map's references to objects of `space` by frequent functions.
fn from_code(image: &Image<'_>, freq: &Frequencies, space: Space) -> Vec<Seen> {
    let map = &image.access;
    if !map.supported {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < map.refs.len() {
        let object = map.refs[i].object;
        let end = i + map.refs[i..].partition_point(|a| a.object == object);
        let refs = &map.refs[i..end];
        i = end;
        if tenant(image, object, space).is_none() {
            continue;
        }
        let once = written_once(image, object);
        for a in refs.iter().filter(|a| !a.indexed) {
            let class = freq.get(a.function);
            if !class.is_frequent() {
                continue;
            }
            let writes = match a.kind {
                AccessKind::Address { writes: false, .. } => continue,
                k => k.writes(),
            };
            // A once-only flag's writes are rare, whoever makes them.
            if writes && once {
                continue;
            }
            let by_address = matches!(a.kind, AccessKind::Address { .. });
            out.push(Seen {
                object,
                offset: a.offset,
                size: (!by_address && a.size > 0).then_some(u64::from(a.size)),
                writes,
                touch: Touch {
                    function: a.function,
                    class,
                    remote: false,
                    shared: true,
                },
            });
        }
    }
    out
}

/// The typed map's accesses to per-CPU objects by frequent functions (through this
/// CPU's offset or, `remote`, another's).
fn from_typed(image: &Image<'_>, freq: &Frequencies) -> Vec<Seen> {
    let map = &image.typed;
    if !map.supported {
        return Vec::new();
    }
    map.accesses
        .iter()
        .filter(|a| a.percpu != NONE)
        .filter_map(|a| {
            let class = frequency_of(freq, a);
            class.is_frequent().then(|| Seen {
                object: a.percpu,
                offset: u64::from(a.offset),
                size: Some(u64::from(a.size.max(1))),
                writes: a.kind.writes(),
                touch: Touch {
                    function: a.function,
                    class,
                    remote: a.remote,
                    shared: true,
                },
            })
        })
        .collect()
}

/// The parts one touch `s` of object `sym` (members `list`) names, as (name, first byte,
/// byte past the end) into the object: the members its bytes overlap (the member at its
/// offset when its size is not known); for an object without members, the bytes the
/// operand touches (the whole object when not known).
fn bytes_of(sym: &Symbol<'_>, list: &[MemberBytes], s: &Seen) -> Vec<(String, u64, u64)> {
    if s.offset >= sym.size {
        return Vec::new();
    }
    let (from, to) = match s.size {
        Some(n) => (s.offset, s.offset.saturating_add(n).min(sym.size)),
        None => (s.offset, s.offset + 1),
    };
    let whole = list.len() == 1 && list[0].name == sym.name;
    if whole {
        return vec![match s.size {
            Some(_) if (from, to) != (0, sym.size) => {
                (format!("{}+{from:#x}", object_name(sym)), from, to)
            }
            _ => (object_name(sym), 0, sym.size),
        }];
    }
    list.iter()
        .filter(|m| m.from < to && m.to > from)
        .map(|m| (member_name(sym, &m.name), m.from, m.to))
        .collect()
}

/// The object's name as reports print it (`file.c:name` for a local).
fn object_name(sym: &Symbol<'_>) -> String {
    sym.qualified_name()
}

/// A member of `sym` named with its object: `runqueues.nr_running`, `irq_stat[3].x`.
fn member_name(sym: &Symbol<'_>, member: &str) -> String {
    let object = object_name(sym);
    match member.starts_with('[') {
        true => format!("{object}{member}"),
        false => format!("{object}.{member}"),
    }
}
