//! False sharing is a property of a line: a member that one CPU writes and a member
//! that another CPU touches often, within one line (or within one 128-byte pair of
//! lines, which the adjacent-line prefetcher fetches together). This module lays each
//! tenant of an object's lines out member by member, says which members are hot and
//! which are written and on what evidence (the known list, perf, the machine code, and
//! the type only where the code says nothing), and finds where a hot member of the
//! object meets a written member of another object. The verdict then reads what
//! changed between the two builds (`LineSharing`).

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::changes::SymbolName;
use super::quiet::Quiet;
use super::structs::leaves;
use crate::evidence::{Evidence, Hotness, Strength};
use crate::layout::SpaceIndex;
use crate::model::access::AccessKind;
use crate::model::{CType, Image, Member, Symbol, SymbolVariables, Variable};

/// Why a member is hot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Hot<'a> {
    /// Evidence names the member itself (a known or measured member).
    Member { evidence: Evidence<'a> },
    /// The code writes it from a function that has evidence of its own.
    Writer {
        function: &'a str,
        evidence: Evidence<'a>,
    },
    /// The object has evidence as a whole and names no member: its write-type members
    /// (lock, atomic, refcount, counter) carry it.
    WriteType { evidence: Evidence<'a> },
    /// The object has evidence as a whole and no write-type member: all of it is hot.
    Whole { evidence: Evidence<'a> },
}

impl<'a> Hot<'a> {
    pub fn evidence(&self) -> Evidence<'a> {
        match *self {
            Hot::Member { evidence }
            | Hot::Writer { evidence, .. }
            | Hot::WriteType { evidence }
            | Hot::Whole { evidence } => evidence,
        }
    }
}

impl std::fmt::Display for Hot<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Hot::Member { evidence } => write!(f, "hot: {evidence}"),
            Hot::Writer { function, evidence } => {
                write!(f, "hot: written by {function}() ({evidence})")
            }
            Hot::WriteType { evidence } => {
                write!(f, "hot: a write-type member of a hot object ({evidence})")
            }
            Hot::Whole { evidence } => {
                write!(f, "hot: the whole object, no write-type member ({evidence})")
            }
        }
    }
}

/// Why a member is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Written<'a> {
    /// The code writes it: `function` (one with evidence of hotness first, else the
    /// first by name) and `writers` functions in all, boot-only code left out.
    Code {
        function: &'a str,
        how: AccessKind,
        writers: u32,
    },
    /// Its object's own evidence of hotness, on a write-type member.
    Evidence { evidence: Evidence<'a> },
    /// No code touches it, and its type is a lock, an atomic or a counter: inferred.
    Inferred,
}

impl Written<'_> {
    /// Written on evidence (the code or the object's own), not on the type alone.
    pub fn is_evidenced(&self) -> bool {
        !matches!(self, Written::Inferred)
    }
}

impl std::fmt::Display for Written<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Written::Code {
                function,
                how,
                writers,
            } => {
                let how = match how {
                    AccessKind::Atomic => "atomically ",
                    AccessKind::Address { .. } => "through its address ",
                    _ => "",
                };
                write!(f, "written {how}by {function}()")?;
                match writers {
                    0 | 1 => Ok(()),
                    n => write!(f, " and {} more", n - 1),
                }
            }
            Written::Evidence { evidence } => write!(f, "written: {evidence}"),
            Written::Inferred => f.write_str("written: inferred from its type (no code touches it)"),
        }
    }
}

/// One member's bytes on one line, and what they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineMember<'a> {
    /// The member's name (`ns.count` spelled as its leaf, `[3].lock` in an array of
    /// structs), or the object's own name when it has no members.
    pub name: Cow<'a, str>,
    /// Its bytes on the line, as offsets into the object: `[from, to)`.
    pub from: u64,
    pub to: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot: Option<Hot<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<Written<'a>>,
}

/// One object's part of a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineTenant<'a> {
    pub name: SymbolName<'a>,
    /// Its pairing key (the same object in both builds has the same one).
    #[serde(skip)]
    pub key: u32,
    /// Its bytes on the line, as offsets into it: `[from, to)`.
    pub from: u64,
    pub to: u64,
    pub members: Vec<LineMember<'a>>,
}

/// A line that the object shares, with every tenant's members on it; the object
/// first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SharedLine<'a> {
    /// The line's first byte (an address, or a per-CPU offset).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub start: u64,
    pub tenants: Vec<LineTenant<'a>>,
}

/// A hot member of the object and a written member of another object on one line
/// (or, `adjacent`, on the two lines of one 128-byte pair).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Meeting<'a> {
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub line: u64,
    pub hot: LineMember<'a>,
    pub neighbour: SymbolName<'a>,
    #[serde(skip)]
    pub neighbour_key: u32,
    /// The neighbour's line (the pair's other line when `adjacent`).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub neighbour_line: u64,
    pub written: LineMember<'a>,
    pub adjacent: bool,
}

impl Meeting<'_> {
    fn same(&self, other: &Meeting<'_>) -> bool {
        self.hot.name == other.hot.name
            && self.neighbour_key == other.neighbour_key
            && self.written.name == other.written.name
    }
}

/// One build's view of an object's lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LinesOf<'a> {
    /// Its lines that another object shares (or whose pair partner holds a written
    /// member meeting one of its hot members).
    pub shared: Vec<SharedLine<'a>>,
    pub meetings: Vec<Meeting<'a>>,
    /// It has hot members, each alone on its line (no other object's bytes there).
    pub hot_alone: bool,
    pub has_hot: bool,
}

/// What the judgement of one object's lines found, in both builds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineSharing<'a> {
    pub old: LinesOf<'a>,
    pub new: LinesOf<'a>,
    /// Meetings in the new build that the old one did not have on one line.
    pub new_meetings: Vec<Meeting<'a>>,
    /// Meetings of the old build gone in the new one.
    pub gone: usize,
    /// Which members carry the object's evidence: `named` (evidence or hot writers
    /// name them), `write-type` (its locks, atomics, counters) or `whole`.
    pub hot_from: &'static str,
}

impl LineSharing<'_> {
    /// The strongest new meeting on one line: `Some(true)` when its member is written
    /// on evidence (the code or the neighbour's own), `Some(false)` on its type alone.
    pub fn same_line(&self) -> Option<bool> {
        self.new_meetings
            .iter()
            .filter(|m| !m.adjacent)
            .map(|m| m.written.written.is_some_and(|w| w.is_evidenced()))
            .max()
    }

    /// A new meeting across a 128-byte pair, written on evidence.
    pub fn adjacent(&self) -> bool {
        self.new_meetings
            .iter()
            .any(|m| m.adjacent && m.written.written.is_some_and(|w| w.is_evidenced()))
    }

    /// The hot members, which shared their lines with another object before, are
    /// each alone on their lines now.
    pub fn hot_now_alone(&self) -> bool {
        self.new.hot_alone && !self.old.hot_alone && self.old.has_hot
    }

    /// The strongest evidence among the hot members' (the object's own, or a hot
    /// writer's).
    pub fn strength(&self) -> Option<Strength> {
        self.new
            .shared
            .iter()
            .chain(&self.old.shared)
            .filter_map(|l| l.tenants.first())
            .flat_map(|t| &t.members)
            .chain(self.new.meetings.iter().map(|m| &m.hot))
            .filter_map(|m| m.hot.map(|h| h.evidence().strength()))
            .max()
    }
}

/// One build, as the judgement of lines reads it.
pub struct Side<'s, 'a, 'd> {
    pub image: &'a Image<'d>,
    /// Data symbols by place: `[global, per-CPU]`.
    pub index: &'s [SpaceIndex<'a, 'd>; 2],
    pub vars: &'s SymbolVariables<'a, 'd>,
    pub quiet: &'s Quiet,
    /// The pairing of the two builds, and which of them this is (0 old, 1 new): the
    /// same object has one key in both.
    pub pairing: &'s super::pairing::Pairing<'a, 'd>,
    pub which: usize,
    /// Where its code evidence comes from: the image's own access map, or (a predicted
    /// build) none.
    pub code: bool,
}

/// What the judgement of lines needs besides the builds.
pub struct Judge<'s, 'a> {
    pub hotness: &'a Hotness,
    pub line_size: u64,
    /// Whether storage of a type is written by many CPUs by its kind
    /// (`HotTypes::is_write_type`).
    pub write_type: &'s mut dyn FnMut(&CType) -> bool,
}

/// The object's own evidence, as `data_change` found it (object, type, declared,
/// inferred from its type).
pub type ObjectEvidence<'a> = Option<Evidence<'a>>;

/// Judges the lines of the object `(o, n)` in both builds.
pub fn judge<'a, 'd>(
    judge: &mut Judge<'_, 'a>,
    old: &Side<'_, 'a, 'd>,
    new: &Side<'_, 'a, 'd>,
    (o, n): (&'a Symbol<'d>, &'a Symbol<'d>),
    evidence: (ObjectEvidence<'a>, ObjectEvidence<'a>),
) -> LineSharing<'a> {
    let (old_lines, _) = lines_of(judge, old, o, evidence.0);
    let (new_lines, hot_from) = lines_of(judge, new, n, evidence.1);
    let new_meetings: Vec<Meeting<'a>> = new_lines
        .meetings
        .iter()
        .filter(|m| {
            !old_lines
                .meetings
                .iter()
                .any(|b| b.same(m) && (!b.adjacent || m.adjacent))
        })
        .cloned()
        .collect();
    let gone = old_lines
        .meetings
        .iter()
        .filter(|b| !new_lines.meetings.iter().any(|m| m.same(b)))
        .count();
    LineSharing {
        old: old_lines,
        new: new_lines,
        new_meetings,
        gone,
        hot_from,
    }
}

/// One build's shared lines and meetings of object `s`.
fn lines_of<'a, 'd>(
    judge: &mut Judge<'_, 'a>,
    side: &Side<'_, 'a, 'd>,
    s: &'a Symbol<'d>,
    evidence: ObjectEvidence<'a>,
) -> (LinesOf<'a>, &'static str) {
    let ls = judge.line_size;
    let p = crate::layout::place(s.place, s.size, ls);
    // The lines it is on, widened to whole 128-byte pairs for the prefetcher.
    let (lo, hi) = (
        (p.first_line & !1).saturating_mul(ls),
        (p.last_line | 1).saturating_add(1).saturating_mul(ls),
    );
    let slot = usize::from(s.space == crate::model::Space::Percpu);
    let others: Vec<&'a Symbol<'d>> = side.index[slot]
        .overlapping_iter(lo, hi)
        .filter(|t| t.size > 0 && !(t.place == s.place && t.size == s.size))
        .filter(|t| !(t.place >= s.place && t.place_end() <= s.place_end()))
        .collect();
    let own_var = side.vars.of(s);
    let (own_members, hot_from) = own_members(judge, side, s, own_var, evidence);
    let has_hot = own_members.iter().any(|(_, m)| m.hot.is_some());
    let mut out = LinesOf {
        has_hot,
        hot_alone: has_hot,
        ..LinesOf::default()
    };
    let mut tenants_of: FxHashMap<u64, Vec<LineTenant<'a>>> = FxHashMap::default();
    for t in &others {
        let var = side.vars.of(t);
        let written = written_members(judge, side, t, var);
        let tp = crate::layout::place(t.place, t.size, ls);
        for line in tp.first_line.max(lo / ls)..=tp.last_line.min(hi / ls - 1) {
            let members: Vec<LineMember<'a>> = written
                .iter()
                .filter(|m| on_line(m, t.place, line, ls))
                .map(|m| clip(m, t.place, line, ls))
                .collect();
            let (from, to) = bytes_on(t.place, t.size, line, ls);
            tenants_of.entry(line).or_default().push(LineTenant {
                name: SymbolName::of(t),
                key: side.pairing.key_id(side.which, t),
                from,
                to,
                members,
            });
        }
    }
    for line in p.first_line..=p.last_line {
        let mine: Vec<LineMember<'a>> = own_members
            .iter()
            .filter(|(_, m)| on_line(m, s.place, line, ls))
            .map(|(_, m)| clip(m, s.place, line, ls))
            .collect();
        let here = tenants_of.get(&line).map(Vec::as_slice).unwrap_or(&[]);
        if !here.is_empty() && mine.iter().any(|m| m.hot.is_some()) {
            out.hot_alone = false;
        }
        let partner = tenants_of.get(&(line ^ 1)).map(Vec::as_slice).unwrap_or(&[]);
        let met = meetings(&mine, line, here, line, false)
            .chain(meetings(&mine, line, partner, line ^ 1, true))
            .collect::<Vec<_>>();
        let met_here = met.iter().any(|m| !m.adjacent);
        if !here.is_empty() || !met.is_empty() {
            let (from, to) = bytes_on(s.place, s.size, line, ls);
            let mut tenants = vec![LineTenant {
                name: SymbolName::of(s),
                key: side.pairing.key_id(side.which, s),
                from,
                to,
                members: mine,
            }];
            tenants.extend(here.iter().cloned());
            if !met_here {
                tenants.extend(
                    partner
                        .iter()
                        .filter(|t| met.iter().any(|m| m.neighbour_key == t.key))
                        .cloned(),
                );
            }
            out.shared.push(SharedLine {
                start: line.saturating_mul(ls),
                tenants,
            });
        }
        // A neighbour on one line and on the pair's other is met on the line only.
        for m in met {
            if !out.meetings.iter().any(|b| b.same(&m)) {
                out.meetings.push(m);
            }
        }
    }
    (out, hot_from)
}

/// The meetings of `mine` (the object's members on `line`) with the written members
/// of `tenants` (on `their_line`).
fn meetings<'m, 'a: 'm>(
    mine: &'m [LineMember<'a>],
    line: u64,
    tenants: &'m [LineTenant<'a>],
    their_line: u64,
    adjacent: bool,
) -> impl Iterator<Item = Meeting<'a>> + 'm {
    mine.iter()
        .filter(|h| h.hot.is_some())
        .flat_map(move |h| {
            tenants.iter().flat_map(move |t| {
                t.members
                    .iter()
                    .filter(|w| w.written.is_some())
                    .map(move |w| Meeting {
                        line,
                        hot: h.clone(),
                        neighbour: t.name,
                        neighbour_key: t.key,
                        neighbour_line: their_line,
                        written: w.clone(),
                        adjacent,
                    })
            })
        })
}

/// Whether member `m` of an object at `place` has bytes on `line`.
fn on_line(m: &LineMember<'_>, place: u64, line: u64, ls: u64) -> bool {
    let (a, b) = (place.saturating_add(m.from), place.saturating_add(m.to.max(m.from + 1)));
    a < (line + 1).saturating_mul(ls) && b > line.saturating_mul(ls)
}

/// Member `m` cut to its bytes on `line`.
fn clip<'a>(m: &LineMember<'a>, place: u64, line: u64, ls: u64) -> LineMember<'a> {
    let (lo, hi) = (line.saturating_mul(ls), (line + 1).saturating_mul(ls));
    let from = place.saturating_add(m.from).max(lo) - place;
    let to = place.saturating_add(m.to).min(hi).saturating_sub(place).max(from);
    LineMember {
        from,
        to,
        ..m.clone()
    }
}

/// The bytes of an object at `place` of `size` that lie on `line`, as offsets into it.
fn bytes_on(place: u64, size: u64, line: u64, ls: u64) -> (u64, u64) {
    let (lo, hi) = (line.saturating_mul(ls), (line + 1).saturating_mul(ls));
    let from = place.max(lo) - place;
    let to = place.saturating_add(size.max(1)).min(hi).saturating_sub(place);
    (from, to.max(from))
}

/// One member of an object as the judgement sees it: a name, a byte range, a type.
struct Part<'a, 'd> {
    name: Cow<'a, str>,
    from: u64,
    to: u64,
    ty: Option<&'a CType>,
    member: Option<&'a Member<'d>>,
}

/// An object's members: its struct's leaf members (each element's, for an array of
/// structs, up to 64 elements), else the object itself.
fn parts<'a, 'd>(
    image: &'a Image<'d>,
    s: &'a Symbol<'d>,
    var: Option<&'a Variable<'d>>,
) -> Vec<Part<'a, 'd>> {
    let whole = || Part {
        name: Cow::Borrowed(s.name),
        from: 0,
        to: s.size.max(1),
        ty: var.map(|v| &*v.ctype),
        member: None,
    };
    let Some(layout) = var.and_then(|v| v.layout).map(|id| image.struct_by_id(id)) else {
        return vec![whole()];
    };
    let members = leaves(layout);
    if members.is_empty() {
        return vec![whole()];
    }
    let element = layout.size.max(1);
    let is_array = var.is_some_and(|v| v.is_array);
    let count = if is_array {
        (s.size / element).clamp(1, 64)
    } else {
        1
    };
    let mut out = Vec::new();
    for i in 0..count {
        let base = i * element;
        for m in &members {
            let name = match (is_array, m.name) {
                (true, Some(n)) => Cow::Owned(format!("[{i}].{n}")),
                (false, Some(n)) => Cow::Borrowed(n),
                (_, None) => continue,
            };
            out.push(Part {
                name,
                from: base.saturating_add(m.offset),
                to: base.saturating_add(m.offset).saturating_add(m.size.max(1)),
                ty: Some(&*m.ctype),
                member: Some(m),
            });
        }
    }
    out
}

/// The evidence that object `s` of `image` is written by a function with evidence of
/// hotness of its own (the strongest such writer, the first by name on a tie).
pub fn hot_writer<'a>(
    hotness: &'a Hotness,
    image: &'a Image<'_>,
    s: &Symbol<'_>,
) -> Option<Evidence<'a>> {
    if !image.access.supported {
        return None;
    }
    let i = u32::try_from(image.index_of(s)?).ok()?;
    image
        .access
        .of_object(i)
        .iter()
        .filter(|a| {
            a.kind != AccessKind::Read && !matches!(a.kind, AccessKind::Address { writes: false, .. })
        })
        .filter_map(|a| {
            let f = image.symbols.get(a.function as usize)?;
            let e = hotness.function(f.name)?;
            Some((e.strength(), std::cmp::Reverse(f.name)))
        })
        .max()
        .map(|(strength, std::cmp::Reverse(function))| Evidence::WrittenBy { function, strength })
}

/// The code's writes to object `s` by functions outside boot-only code, by offset:
/// `(offset, end, function, kind)`; `None` when the build has no code evidence.
fn code_writes<'a, 'd>(
    side: &Side<'_, 'a, 'd>,
    s: &Symbol<'d>,
) -> Option<(bool, Vec<(u64, u64, &'a Symbol<'d>, AccessKind)>)> {
    let image = side.image;
    if !side.code || !image.access.supported {
        return None;
    }
    let i = image.index_of(s)?;
    let refs = image.access.of_object(u32::try_from(i).ok()?);
    let writes = refs
        .iter()
        .filter(|a| {
            matches!(
                a.kind,
                AccessKind::Write
                    | AccessKind::ReadWrite
                    | AccessKind::Atomic
                    | AccessKind::Address { writes: true, .. }
            )
        })
        .filter_map(|a| {
            let f = image.symbols.get(a.function as usize)?;
            let boot = f.section.starts_with(".init") || f.section.starts_with(".exit");
            // An address handed to a writer, or an indexed operand: the member written
            // is not known, so the whole object counts as written from there on (an
            // index runs through an array's elements).
            let end = match (a.kind, a.indexed) {
                (AccessKind::Address { .. }, _) | (_, true) => s.size.max(1),
                _ => a.offset.saturating_add(u64::from(a.size.max(1))),
            };
            (!boot).then_some((a.offset, end, f, a.kind))
        })
        .collect();
    Some((!refs.is_empty(), writes))
}

/// The writer of `[from, to)` among `writes`: one with evidence of hotness first, else
/// the first by name; with how many functions write there.
fn writer_of<'a, 'd>(
    hotness: &'a Hotness,
    writes: &[(u64, u64, &'a Symbol<'d>, AccessKind)],
    from: u64,
    to: u64,
) -> Option<(&'a Symbol<'d>, AccessKind, u32, Option<Evidence<'a>>)> {
    let mut here: Vec<(&'a Symbol<'d>, AccessKind)> = writes
        .iter()
        .filter(|w| w.0 < to && w.1 > from)
        .map(|w| (w.2, w.3))
        .collect();
    if here.is_empty() {
        return None;
    }
    here.sort_by(|a, b| (a.0.name, a.1).cmp(&(b.0.name, b.1)));
    let mut names: Vec<&str> = here.iter().map(|w| w.0.name).collect();
    names.dedup();
    let hot = here
        .iter()
        .filter_map(|w| hotness.function(w.0.name).map(|e| (w, e)))
        .max_by_key(|(w, e)| (e.strength(), std::cmp::Reverse(w.0.name)));
    Some(match hot {
        Some((w, e)) => (w.0, w.1, names.len() as u32, Some(e)),
        None => (here[0].0, here[0].1, names.len() as u32, None),
    })
}

/// The object's own members with their hot roles, and which rule gave them.
#[allow(clippy::type_complexity)]
fn own_members<'a, 'd>(
    judge: &mut Judge<'_, 'a>,
    side: &Side<'_, 'a, 'd>,
    s: &'a Symbol<'d>,
    var: Option<&'a Variable<'d>>,
    evidence: ObjectEvidence<'a>,
) -> (Vec<(Part<'a, 'd>, LineMember<'a>)>, &'static str) {
    let image = side.image;
    let parts = parts(image, s, var);
    let writes = code_writes(side, s).map(|w| w.1).unwrap_or_default();
    let struct_name = var.and_then(|v| image.struct_name(v));
    let mut named = false;
    let mut out: Vec<(Part<'a, 'd>, LineMember<'a>)> = parts
        .into_iter()
        .map(|p| {
            let member_evidence = match (struct_name, p.member.and_then(|m| m.name)) {
                (Some(t), Some(m)) => judge.hotness.member(t, m, p.from),
                _ => None,
            };
            let by_writer = writer_of(judge.hotness, &writes, p.from, p.to).and_then(
                |(f, _, _, e)| e.map(|evidence| Hot::Writer {
                    function: f.name,
                    evidence,
                }),
            );
            let hot = member_evidence
                .map(|evidence| Hot::Member { evidence })
                .or(by_writer);
            named |= hot.is_some();
            let line = LineMember {
                name: p.name.clone(),
                from: p.from,
                to: p.to,
                hot,
                written: None,
            };
            (p, line)
        })
        .collect();
    if named {
        return (out, "named");
    }
    let Some(evidence) = evidence else {
        return (out, "none");
    };
    let mut write_type = false;
    for (p, m) in &mut out {
        if p.ty.is_some_and(|t| (judge.write_type)(t)) {
            m.hot = Some(Hot::WriteType { evidence });
            write_type = true;
        }
    }
    if write_type {
        return (out, "write-type");
    }
    for (_, m) in &mut out {
        m.hot = Some(Hot::Whole { evidence });
    }
    (out, "whole")
}

/// A neighbour's written members: those the code writes, else (where the code says
/// nothing of a member) its write-type members, on its own evidence or inferred.
/// Storage that is not written at run time (read-only, boot-only, read-mostly, cold by
/// kernel convention) has none.
fn written_members<'a, 'd>(
    judge: &mut Judge<'_, 'a>,
    side: &Side<'_, 'a, 'd>,
    t: &'a Symbol<'d>,
    var: Option<&'a Variable<'d>>,
) -> Vec<LineMember<'a>> {
    let image = side.image;
    let type_name = var.map(|v| v.type_name());
    if !super::placement::writable(t, var.map(|v| &*v.ctype))
        || side.quiet.of(t, type_name).is_some()
        || crate::evidence::cold::of(t.name, t.section, type_name).is_some()
    {
        return Vec::new();
    }
    let code = code_writes(side, t);
    let own = judge
        .hotness
        .object(t.name, var.and_then(|v| image.struct_name(v)))
        .filter(|e| e.strength() >= Strength::Known);
    let (touched, writes) = code.unwrap_or_default();
    let refs = match image.index_of(t).and_then(|i| u32::try_from(i).ok()) {
        Some(i) if touched => image.access.of_object(i),
        _ => &[],
    };
    let mut out = Vec::new();
    for p in parts(image, t, var) {
        let written = if let Some((f, how, writers, _)) =
            writer_of(judge.hotness, &writes, p.from, p.to)
        {
            Some(Written::Code {
                function: f.name,
                how,
                writers,
            })
        } else if !p.ty.is_some_and(|ty| (judge.write_type)(ty))
            || super::placement::sleeping_lock(p.ty.map_or("", |ty| &*ty.c))
        {
            None
        } else if let Some(evidence) = own {
            Some(Written::Evidence { evidence })
        } else if refs.iter().all(|a| {
            let end = a.offset.saturating_add(u64::from(a.size.max(1)));
            !(a.offset < p.to && end > p.from)
        }) {
            Some(Written::Inferred)
        } else {
            None
        };
        if let Some(w) = written {
            out.push(LineMember {
                name: p.name,
                from: p.from,
                to: p.to,
                hot: None,
                written: Some(w),
            });
        }
    }
    out
}
