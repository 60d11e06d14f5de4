//! Struct lines judged by who shares them. False sharing inside a struct is a property
//! of one of its lines: a member that frequent code writes, and beside it a member that
//! other frequent code reads or writes. For each struct whose layout changed, this
//! module lays out the members the typed access map sees touched (every instance,
//! through a pointer of the struct's type), keeps the touches by frequent code
//! (`evidence::frequency`), and finds those meetings in both builds; a meeting the new
//! build has and the old one did not is what the verdict flags, one that ended is an
//! improvement. The written member must be one other CPUs write by design (written
//! atomically, or an atomic's or a lock's word): a struct one CPU owns (on a stack, a
//! call's arguments, a task's saved registers) is written with plain stores and shares
//! nothing. An instance is taken as starting a line (the slab caches of hot structs are
//! line-aligned); a member moving to another line is information, not a verdict.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::evidence::frequency::{Frequencies, Frequency, Seldom};
use crate::model::Image;
use crate::model::typed::TypedAccess;

/// One member's bytes and the frequent code that touches it, in one build.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Touched<'a> {
    name: &'a str,
    from: u64,
    to: u64,
    /// Frequent writers: function index and class, sorted by index.
    writers: Vec<(u32, Frequency)>,
    /// Frequent functions that read it and do not write it, sorted by index.
    readers: Vec<(u32, Frequency)>,
    /// The frequent writers that write it the way storage other CPUs write is written
    /// (`shared_write`), sorted by index.
    sharers: Vec<(u32, Frequency)>,
}

/// Whether access `a` to member `path` is a write other CPUs contend with by design: an
/// atomic (a `lock` prefix, `xchg`), or `spin_unlock()`'s one-byte store to a queued
/// spinlock's `locked` byte. An object one CPU owns (on a stack, a call's arguments, a
/// task's saved registers, one being built) is written with plain stores, an atomic's
/// and a lock's initial value included.
fn shared_write(a: &TypedAccess, path: &str) -> bool {
    use crate::model::access::AccessKind;
    a.kind == AccessKind::Atomic
        || (a.kind == AccessKind::Write
            && a.size == 1
            && path.split(" | ").any(|p| p.ends_with("raw_lock.locked")))
}

/// A member frequent code writes, and another member on its line that other frequent
/// code touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StructMeeting {
    /// The line, counted from the struct's start (an instance taken as line-aligned).
    pub line: u64,
    /// The written member and its bytes `[from, to)`.
    pub written: String,
    /// Its first byte.
    pub written_from: u64,
    /// The offset past its last byte.
    pub written_to: u64,
    /// The frequent function that writes it (the most frequent, then the first by
    /// name), and why it is frequent.
    pub writer: String,
    /// Why `writer` is frequent.
    pub writer_why: String,
    /// The other member.
    pub other: String,
    /// Its first byte.
    pub other_from: u64,
    /// The offset past its last byte.
    pub other_to: u64,
    /// The frequent function that touches it and does not write `written`.
    pub toucher: String,
    /// Why `toucher` is frequent.
    pub toucher_why: String,
    /// `toucher` writes the other member (else it only reads it).
    pub toucher_writes: bool,
}

/// What the judgement of a struct's lines found in both builds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StructSharing {
    /// Meetings of the new build that the old one did not have.
    pub new_meetings: Vec<StructMeeting>,
    /// Meetings of the old build that the new one does not have.
    pub ended: Vec<StructMeeting>,
    /// Meetings both builds have (counted, not listed).
    pub kept: usize,
    /// The functions known or measured hot whose footprint in the struct (how many of
    /// its lines they touch) changed, most lines first (at most 8).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub footprints: Vec<Footprint>,
}

/// How many lines of a struct a hot function touches, in each build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Footprint {
    /// The function.
    pub function: String,
    /// The lines it touches in the old build (counted from the struct's start).
    pub old: Vec<u64>,
    /// The lines it touches in the new build.
    pub new: Vec<u64>,
}

/// How many meetings of each kind a report keeps per struct (the rest are counted).
const KEPT: usize = 8;

/// The judgement of struct `name`'s lines between `old` and `new`; `None` when either
/// build has no typed access map.
pub fn judge<'a>(
    name: &str,
    (old, new): (&'a Image<'_>, &'a Image<'_>),
    (old_freq, new_freq): (&Frequencies, &Frequencies),
    line_size: u64,
) -> Option<StructSharing> {
    if !old.typed.supported || !new.typed.supported || line_size == 0 {
        return None;
    }
    let before = meetings(old, old_freq, name, line_size);
    let after = meetings(new, new_freq, name, line_size);
    let mut out = StructSharing::default();
    for (key, m) in &after {
        match before.contains_key(key) {
            true => out.kept += 1,
            false if out.new_meetings.len() < KEPT => out.new_meetings.push(m.clone()),
            false => {}
        }
    }
    for (key, m) in &before {
        if !after.contains_key(key) && out.ended.len() < KEPT {
            out.ended.push(m.clone());
        }
    }
    out.footprints = footprints((
        footprint(old, old_freq, name, line_size),
        footprint(new, new_freq, name, line_size),
    ));
    Some(out)
}

/// The lines of struct `name` each function known or measured hot touches, by name.
fn footprint(
    image: &Image<'_>,
    freq: &Frequencies,
    name: &str,
    ls: u64,
) -> BTreeMap<String, std::collections::BTreeSet<u64>> {
    let mut out: BTreeMap<String, std::collections::BTreeSet<u64>> = BTreeMap::new();
    for a in image.typed.of_type(name) {
        let evidence = matches!(
            frequency_of(freq, a),
            Frequency::Frequent(crate::evidence::frequency::Often::Evidence { .. })
        );
        if !evidence {
            continue;
        }
        let from = u64::from(a.offset);
        let to = from + u64::from(a.size.max(1));
        out.entry(name_of(image, a.function).to_string())
            .or_default()
            .extend(from / ls..=(to - 1) / ls);
    }
    out
}

/// The footprints whose line count changed, most lines in the new build first.
fn footprints(
    (old, new): (
        BTreeMap<String, std::collections::BTreeSet<u64>>,
        BTreeMap<String, std::collections::BTreeSet<u64>>,
    ),
) -> Vec<Footprint> {
    let mut out: Vec<Footprint> = new
        .into_iter()
        .filter_map(|(function, lines)| {
            let before = old.get(&function)?;
            (before.len() != lines.len()).then(|| Footprint {
                function,
                old: before.iter().copied().collect(),
                new: lines.into_iter().collect(),
            })
        })
        .collect();
    out.sort_by(|a, b| (b.new.len(), &a.function).cmp(&(a.new.len(), &b.function)));
    out.truncate(KEPT);
    out
}

/// The meetings of struct `name` in one build, by (written member, other member).
fn meetings<'a>(
    image: &'a Image<'_>,
    freq: &Frequencies,
    name: &str,
    ls: u64,
) -> BTreeMap<(&'a str, &'a str), StructMeeting> {
    let touched = touched(image, freq, name);
    let mut out = BTreeMap::new();
    // Only a member other CPUs write by design can bounce the line (`shared_write`).
    for w in touched.iter().filter(|t| !t.sharers.is_empty()) {
        for line in w.from / ls..=(w.to.max(w.from + 1) - 1) / ls {
            let (lo, hi) = (line * ls, (line + 1) * ls);
            for o in &touched {
                let apart = o.to <= w.from || o.from >= w.to;
                if o.name == w.name || !apart || o.to <= lo || o.from >= hi {
                    continue;
                }
                // Other code: not a writer of `w` (a function writing both writes them
                // together, true sharing).
                let (f, f_class) = *w
                    .sharers
                    .iter()
                    .max_by_key(|(f, c)| (c.rank(), std::cmp::Reverse(name_of(image, *f))))
                    .expect("sharers is not empty");
                let other_code = |t: &&(u32, Frequency)| {
                    w.writers.binary_search_by_key(&t.0, |x| x.0).is_err()
                        && !related((f, f_class), **t)
                };
                let toucher = o
                    .writers
                    .iter()
                    .filter(other_code)
                    .map(|t| (t, true))
                    .chain(o.readers.iter().filter(other_code).map(|t| (t, false)))
                    .max_by_key(|((f, c), _)| (c.rank(), std::cmp::Reverse(name_of(image, *f))));
                let Some(((g, g_class), writes)) = toucher else {
                    continue;
                };
                out.entry((w.name, o.name))
                    .or_insert_with(|| StructMeeting {
                        line,
                        written: w.name.to_string(),
                        written_from: w.from,
                        written_to: w.to,
                        writer: name_of(image, f).to_string(),
                        writer_why: f_class.describe(image),
                        other: o.name.to_string(),
                        other_from: o.from,
                        other_to: o.to,
                        toucher: name_of(image, *g).to_string(),
                        toucher_why: g_class.describe(image),
                        toucher_writes: writes,
                    });
            }
        }
    }
    out
}

/// Whether two functions run as one path on one CPU: one calls the other directly, or
/// one caller makes both frequent (`copy_process()` calling `mm_init()` and
/// `dup_mmap()` on the mm it is building). Their accesses follow each other; they do
/// not contend.
fn related((f, fc): (u32, Frequency), (g, gc): (u32, Frequency)) -> bool {
    let via = |c: Frequency| match c {
        Frequency::Frequent(crate::evidence::frequency::Often::CalledBy { caller }) => Some(caller),
        _ => None,
    };
    via(fc) == Some(g) || via(gc) == Some(f) || (via(fc).is_some() && via(fc) == via(gc))
}

fn name_of<'a>(image: &'a Image<'_>, f: u32) -> &'a str {
    image.symbols.get(f as usize).map_or("?", |s| s.name)
}

/// The members of struct `name` that frequent code touches, by (offset, size, path),
/// with their frequent writers and readers.
fn touched<'a>(image: &'a Image<'_>, freq: &Frequencies, name: &str) -> Vec<Touched<'a>> {
    let map = &image.typed;
    let mut parts: BTreeMap<(u64, u64, &'a str), Touched<'a>> = BTreeMap::new();
    for a in map.of_type(name) {
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
        let t = parts.entry((from, to, member)).or_insert_with(|| Touched {
            name: member,
            from,
            to,
            writers: Vec::new(),
            readers: Vec::new(),
            sharers: Vec::new(),
        });
        if shared_write(a, member)
            && let Err(i) = t.sharers.binary_search_by_key(&a.function, |x| x.0)
        {
            t.sharers.insert(i, (a.function, class));
        }
        let list = match a.kind.writes() {
            true => &mut t.writers,
            false => &mut t.readers,
        };
        if let Err(i) = list.binary_search_by_key(&a.function, |x| x.0) {
            list.insert(i, (a.function, class));
        }
    }
    let mut out: Vec<Touched<'a>> = parts.into_values().collect();
    for t in &mut out {
        let writers = std::mem::take(&mut t.writers);
        t.readers
            .retain(|r| writers.binary_search_by_key(&r.0, |x| x.0).is_err());
        t.writers = writers;
    }
    out
}

/// How often the function of `a` runs; an access in a `.cold` part is rare whatever
/// its function.
fn frequency_of(freq: &Frequencies, a: &TypedAccess) -> Frequency {
    match a.cold {
        true => Frequency::Rare(Seldom::Cold),
        false => freq.get(a.function),
    }
}
