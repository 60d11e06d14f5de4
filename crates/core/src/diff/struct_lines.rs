//! Struct lines judged by who shares them. False sharing inside a struct is a property
//! of one of its lines: a member that frequent code writes, and beside it a member that
//! other frequent code reads or writes. For each struct whose layout changed, this
//! module takes the members the typed access map sees touched by frequent code (every
//! instance, through a pointer of the struct's type; `contention::structs`) and finds
//! those meetings in both builds with the rule `show --contention` uses
//! (`contention::meet`, without its co-written refinement); a meeting the new
//! build has and the old one did not is what the verdict flags, one that ended is an
//! improvement. The written member must be written the way storage other CPUs write is
//! (an atomic, or `spin_unlock()`'s store of the locked byte: a struct one CPU owns is
//! written with plain stores), and the two functions must not be one path on one CPU.
//! An instance is taken as starting a line (the slab caches of hot structs are
//! line-aligned); a member moving to another line is information, not a verdict.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::contention::meet::{self, Rules, name_of};
use crate::contention::structs::{Through, type_parts};
use crate::evidence::frequency::{Frequencies, Frequency};
use crate::model::Image;

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
            crate::contention::structs::frequency_of(freq, a),
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

/// The meetings of struct `name` in one build, by (written member, other member): the
/// first line each pair meets on (`contention::meet`, every typed access counted).
fn meetings(
    image: &Image<'_>,
    freq: &Frequencies,
    name: &str,
    ls: u64,
) -> BTreeMap<(String, String), StructMeeting> {
    let parts = type_parts(image, freq, name, Through::Any);
    let rules = Rules {
        line_size: ls,
        strength: Frequency::rank,
        remote: false,
        co_written: false,
        shared_writes: true,
    };
    let mut out = BTreeMap::new();
    for m in meet::meetings(image, &parts, &rules) {
        let (w, o) = (&parts[m.written], &parts[m.other]);
        out.entry((w.name.to_string(), o.name.to_string()))
            .or_insert_with(|| StructMeeting {
                line: m.line,
                written: w.name.to_string(),
                written_from: w.from,
                written_to: w.to,
                writer: name_of(image, m.writer.function).to_string(),
                writer_why: m.writer.class.describe(image),
                other: o.name.to_string(),
                other_from: o.from,
                other_to: o.to,
                toucher: name_of(image, m.toucher.function).to_string(),
                toucher_why: m.toucher.class.describe(image),
                toucher_writes: m.toucher_writes,
            });
    }
    out
}
