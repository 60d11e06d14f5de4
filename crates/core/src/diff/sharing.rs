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

use super::lines::{Hot, LineMember, LineSharing, LineTenant, LinesOf, Meeting, SharedLine, Written};
use super::names::SymbolName;
use super::quiet::Quiet;
use super::structs::leaves;
use super::written::{sleeping_lock, writable};
use crate::evidence::{Evidence, Hotness, Strength};
use crate::layout::SpaceIndex;
use crate::model::access::AccessKind;
use crate::model::{CType, Image, Member, Symbol, SymbolVariables, Variable};

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
    if !writable(t, var.map(|v| &*v.ctype))
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
            || sleeping_lock(p.ty.map_or("", |ty| &*ty.c))
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
