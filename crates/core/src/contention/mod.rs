//! A static contention audit of one build (`show --contention`): perf c2c without
//! running anything. It ranks the cache lines where a member that frequent code writes
//! sits beside a member that other frequent code reads or writes (`meet`), for
//!
//! - global data objects, from the access map: lines shared between objects and lines
//!   within one (`objects`);
//! - per-CPU data, where another CPU reaches it (`per_cpu()`, the typed access map's
//!   `remote`): each CPU's copy is its own otherwise, so a meeting there needs a remote
//!   side;
//! - struct types, from the typed access map: every instance, lines counted from the
//!   struct's start, an instance taken as line-aligned (`structs`).
//!
//! "Frequent" is `evidence::frequency`'s class: measured or known hot, or called
//! directly by such a function; unknown never counts. A line is ranked by the strength
//! of both sides of its strongest meeting (measured > known > called by, the weaker
//! side first), then by how many distinct frequent functions meet on it, then by name.

pub mod meet;
pub mod objects;
pub mod structs;

use rayon::prelude::*;
use serde::Serialize;

use crate::evidence::Strength;
use crate::evidence::frequency::{Frequencies, Frequency, Often};
use crate::model::typed::NONE;
use crate::model::{Image, Space};
use meet::{Met, Part, Rules, Touch, name_of};

/// The strength of a frequent function's evidence, as the audit ranks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Called directly by a function with evidence.
    CalledBy,
    /// On the known-hot list.
    Known,
    /// Measured by perf.
    Measured,
}

impl Basis {
    /// The basis of a class; `None` unless it is frequent.
    pub fn of(class: Frequency) -> Option<Basis> {
        match class {
            Frequency::Frequent(Often::Evidence {
                strength: Strength::Measured,
            }) => Some(Basis::Measured),
            Frequency::Frequent(Often::Evidence { .. }) => Some(Basis::Known),
            Frequency::Frequent(Often::CalledBy { .. }) => Some(Basis::CalledBy),
            _ => None,
        }
    }

    /// As `meet::Rules::strength` ranks a class: measured 3, known 2, called by 1,
    /// anything else 0.
    pub fn rank(class: Frequency) -> u8 {
        Basis::of(class).map_or(0, |b| b as u8 + 1)
    }
}

/// Where a contended line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// A line of global data objects.
    Global,
    /// A line of the per-CPU area, reached from another CPU.
    Percpu,
    /// A line of a struct type, counted from its start.
    Struct,
}

/// One side of a meeting: a member, its bytes, and the frequent function named for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditSide {
    /// The member: an object's (`runqueues.nr_running`, `jiffies`) or a struct type's
    /// path (`lock.rlock`).
    pub member: String,
    /// Its first byte, as an offset into its object or struct.
    pub from: u64,
    /// The offset past its last byte.
    pub to: u64,
    /// The frequent function named: the strongest, then the first by name.
    pub function: String,
    /// Why that function is frequent (`frequent: known hot`).
    pub why: String,
    /// The strength of that evidence.
    pub basis: Basis,
    /// The function writes the member (else it only reads it).
    pub writes: bool,
    /// The function reaches it from another CPU (`per_cpu()`).
    pub remote: bool,
    /// How many distinct frequent functions touch the member this way (writers of the
    /// written side; for the other side, those that do not write the written one).
    pub count: usize,
}

/// A written member and another member on its line that other frequent code touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContendedPair {
    /// The written member and its frequent writer.
    pub written: AuditSide,
    /// The other member and the frequent function touching it that does not write
    /// `written`.
    pub other: AuditSide,
}

impl ContendedPair {
    /// The ranking key of both sides: the weaker side's basis, then the stronger's.
    pub fn strength(&self) -> (Basis, Basis) {
        let (a, b) = (self.written.basis, self.other.basis);
        (a.min(b), a.max(b))
    }
}

/// One contended line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContendedLine {
    /// Global data, per-CPU data or a struct type.
    pub kind: LineKind,
    /// The struct type, for a struct line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// The line's index: the address, per-CPU offset or offset into the struct divided
    /// by the line size.
    pub index: u64,
    /// Its first byte: an address, a per-CPU offset or an offset into the struct.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub start: u64,
    /// Distinct frequent functions on its meetings: the writers of each written member
    /// and the functions touching each other member that do not write it.
    pub functions: usize,
    /// Every meeting on the line, strongest first.
    pub pairs: Vec<ContendedPair>,
}

impl ContendedLine {
    /// The key lines are ranked by, best first when sorted ascending.
    fn rank_key(&self) -> impl Ord + '_ {
        let best = self.pairs.first();
        (
            std::cmp::Reverse(best.map(ContendedPair::strength)),
            std::cmp::Reverse(self.functions),
            best.map(|p| (&p.written.member, &p.other.member)),
            self.kind,
            &self.type_name,
            self.start,
        )
    }
}

/// Ranks `lines` (`ContendedLine::rank_key`): by the strength of both sides of each
/// line's strongest meeting, then by its distinct frequent functions, then by names and
/// place; the same order whatever order they come in.
pub fn rank(lines: &mut [ContendedLine]) {
    lines.sort_by(|a, b| a.rank_key().cmp(&b.rank_key()));
}

/// How many functions are frequent, by basis.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FrequentCounts {
    /// Measured by perf.
    pub measured: usize,
    /// On the known-hot list.
    pub known: usize,
    /// Called directly by one of them.
    pub called_by: usize,
}

/// How many contended lines of each kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LineCounts {
    /// Lines of global data.
    pub global: usize,
    /// Per-CPU lines reached from another CPU.
    pub percpu: usize,
    /// Lines of struct types.
    pub structs: usize,
}

/// The audit of one build.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Audit {
    /// The line size the lines are cut by.
    pub line_size: u64,
    /// The struct type the audit was restricted to (`--struct NAME`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub struct_name: Option<String>,
    /// The build's code was read (the access map): global and per-CPU data audited.
    pub code: bool,
    /// The typed access map was read: struct types and remote per-CPU accesses audited.
    pub typed: bool,
    /// The frequent functions.
    pub frequent: FrequentCounts,
    /// Contended lines by kind.
    pub counts: LineCounts,
    /// Every contended line, ranked.
    pub lines: Vec<ContendedLine>,
}

/// The contention audit of `image`, its functions classed by `freq`; `struct_name`
/// restricts it to one struct type: its lines, and the lines of global and per-CPU
/// objects of that type.
pub fn audit(image: &Image<'_>, freq: &Frequencies, struct_name: Option<&str>) -> Audit {
    let ls = image.line_size.max(1);
    let rules = Rules {
        line_size: ls,
        strength: Basis::rank,
        remote: false,
        co_written: true,
        shared_writes: false,
    };
    let mut lines = Vec::new();
    if image.access.supported || image.typed.supported {
        for (space, kind) in [
            (Space::Global, LineKind::Global),
            (Space::Percpu, LineKind::Percpu),
        ] {
            let parts = objects::object_parts(image, freq, space);
            let rules = Rules {
                remote: space == Space::Percpu,
                ..rules
            };
            let mets = meet::meetings(image, &parts, &rules);
            let keep = |m: &Met| {
                struct_name.is_none_or(|n| {
                    [m.written, m.other]
                        .iter()
                        .any(|&i| object_type(image, parts[i].object) == Some(n))
                })
            };
            let mets: Vec<Met> = mets.into_iter().filter(keep).collect();
            lines.extend(line_entries(image, &parts, &mets, kind, None, ls));
        }
    }
    if image.typed.supported {
        let types: Vec<&str> = match struct_name {
            Some(n) => vec![n],
            None => image.typed.types.iter().map(String::as_str).collect(),
        };
        let per_type: Vec<Vec<ContendedLine>> = types
            .par_iter()
            .map(|name| {
                let parts = structs::type_parts(image, freq, name, structs::Through::Pointers);
                let rules = Rules {
                    shared_writes: true,
                    ..rules
                };
                let mets = meet::meetings(image, &parts, &rules);
                line_entries(image, &parts, &mets, LineKind::Struct, Some(name), ls)
            })
            .collect();
        lines.extend(per_type.into_iter().flatten());
    }
    rank(&mut lines);
    let count = |k| lines.iter().filter(|l| l.kind == k).count();
    Audit {
        line_size: ls,
        struct_name: struct_name.map(str::to_string),
        code: image.access.supported,
        typed: image.typed.supported,
        frequent: frequent_counts(image, freq),
        counts: LineCounts {
            global: count(LineKind::Global),
            percpu: count(LineKind::Percpu),
            structs: count(LineKind::Struct),
        },
        lines,
    }
}

/// The struct type of object `i` (`NONE`: none).
fn object_type<'a>(image: &'a Image<'_>, i: u32) -> Option<&'a str> {
    let s = image.symbols.get(i as usize).filter(|_| i != NONE)?;
    image.variable_for(s).and_then(|v| image.struct_name(v))
}

/// How many functions of `image` are frequent, by basis.
fn frequent_counts(image: &Image<'_>, freq: &Frequencies) -> FrequentCounts {
    let mut out = FrequentCounts::default();
    for i in 0..image.symbols.len() {
        match Basis::of(freq.get(i as u32)) {
            Some(Basis::Measured) => out.measured += 1,
            Some(Basis::Known) => out.known += 1,
            Some(Basis::CalledBy) => out.called_by += 1,
            None => {}
        }
    }
    out
}

/// The meetings `mets` among `parts`, one entry per line, each line's pairs strongest
/// first.
fn line_entries(
    image: &Image<'_>,
    parts: &[Part<'_>],
    mets: &[Met],
    kind: LineKind,
    type_name: Option<&str>,
    ls: u64,
) -> Vec<ContendedLine> {
    let mut by_line: std::collections::BTreeMap<u64, Vec<&Met>> = Default::default();
    for m in mets {
        by_line.entry(m.line).or_default().push(m);
    }
    by_line
        .into_iter()
        .map(|(line, mets)| {
            let mut functions: Vec<u32> = Vec::new();
            let mut pairs: Vec<ContendedPair> = Vec::with_capacity(mets.len());
            for m in mets {
                let (w, o) = (&parts[m.written], &parts[m.other]);
                let touchers: Vec<&Touch> = o
                    .writers
                    .iter()
                    .chain(&o.readers)
                    .filter(|t| !w.written_by(t.function))
                    .collect();
                functions.extend(w.writers.iter().map(|t| t.function));
                functions.extend(touchers.iter().map(|t| t.function));
                let written = side(image, w, &m.writer, true, w.writers.len());
                let other = side(image, o, &m.toucher, m.toucher_writes, touchers.len());
                pairs.push(ContendedPair { written, other });
            }
            functions.sort_unstable();
            functions.dedup();
            pairs.sort_by(|a, b| {
                (
                    std::cmp::Reverse(a.strength()),
                    &a.written.member,
                    &a.other.member,
                )
                    .cmp(&(
                        std::cmp::Reverse(b.strength()),
                        &b.written.member,
                        &b.other.member,
                    ))
            });
            ContendedLine {
                kind,
                type_name: type_name.map(str::to_string),
                index: line,
                start: line.saturating_mul(ls),
                functions: functions.len(),
                pairs,
            }
        })
        .collect()
}

/// One side of a meeting: part `p`, function `t`, offsets into `p`'s object (or struct).
fn side(image: &Image<'_>, p: &Part<'_>, t: &Touch, writes: bool, count: usize) -> AuditSide {
    let base = image
        .symbols
        .get(p.object as usize)
        .filter(|_| p.object != NONE)
        .map_or(0, |s| s.place);
    AuditSide {
        member: p.name.to_string(),
        from: p.from - base,
        to: p.to - base,
        function: name_of(image, t.function).to_string(),
        why: t.class.describe(image),
        basis: Basis::of(t.class).unwrap_or(Basis::CalledBy),
        writes,
        remote: t.remote,
        count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(member: &str, basis: Basis) -> AuditSide {
        AuditSide {
            member: member.to_string(),
            from: 0,
            to: 8,
            function: format!("f_{member}"),
            why: String::new(),
            basis,
            writes: true,
            remote: false,
            count: 1,
        }
    }

    /// A struct line of `ty` whose one pair is `w` (written, `a`) beside `o` (`b`),
    /// with `functions` frequent functions.
    fn line(
        ty: &str,
        (w, a): (&str, Basis),
        (o, b): (&str, Basis),
        functions: usize,
    ) -> ContendedLine {
        ContendedLine {
            kind: LineKind::Struct,
            type_name: Some(ty.to_string()),
            index: 0,
            start: 0,
            functions,
            pairs: vec![ContendedPair {
                written: side(w, a),
                other: side(o, b),
            }],
        }
    }

    /// Both sides' evidence first, the weaker side's before the stronger's (known
    /// beside measured, then known beside known, then called-by beside measured, then
    /// beside known, then beside called-by), then the functions that meet (more first),
    /// then names; the order in which lines come does not matter.
    #[test]
    fn lines_rank_by_both_sides_then_functions_then_names() {
        use Basis::{CalledBy as C, Known as K, Measured as M};
        let lines = vec![
            line("a", ("x", C), ("y", C), 50),
            line("b", ("x", K), ("y", C), 9),
            line("c", ("x", C), ("y", K), 10),
            line("d", ("x", K), ("y", K), 2),
            line("e", ("x", M), ("y", C), 1),
            line("f", ("x", K), ("y", M), 1),
            line("g", ("b", K), ("y", K), 2),
            line("h", ("b", K), ("y", K), 2),
        ];
        let order = |mut v: Vec<ContendedLine>| {
            rank(&mut v);
            v.into_iter()
                .map(|l| l.type_name.unwrap())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let want = "f g h d e c b a";
        assert_eq!(order(lines.clone()), want);
        let mut reversed = lines;
        reversed.reverse();
        assert_eq!(order(reversed), want);
    }

    /// The basis of each class, and the rank `meet` names sides by.
    #[test]
    fn a_class_has_a_basis_only_when_frequent() {
        let known = Frequency::Frequent(Often::Evidence {
            strength: Strength::Known,
        });
        let measured = Frequency::Frequent(Often::Evidence {
            strength: Strength::Measured,
        });
        let called = Frequency::Frequent(Often::CalledBy { caller: 0 });
        assert_eq!(Basis::of(measured), Some(Basis::Measured));
        assert_eq!(Basis::of(known), Some(Basis::Known));
        assert_eq!(Basis::of(called), Some(Basis::CalledBy));
        assert_eq!(Basis::of(Frequency::Unknown), None);
        let ranks: Vec<u8> = [measured, known, called, Frequency::Unknown]
            .map(Basis::rank)
            .to_vec();
        assert_eq!(ranks, [3, 2, 1, 0]);
    }
}
