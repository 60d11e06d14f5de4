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

use super::hot::{StructNames, TypeFacts};
use super::lines::{
    HOT_PLACES, Hot, HotPlace, LineMember, LineSharing, LineTenant, LinesOf, Meeting, SharedLine,
    Tie, Written,
};
use super::names::SymbolName;
use super::structs::leaves;
use crate::evidence::frequency::{Frequencies, Frequency, Seldom};
use crate::evidence::{Evidence, Hotness, Strength};
use crate::kernel::{Class, Regions};
use crate::layout::SpaceIndex;
use crate::model::access::AccessKind;
use crate::model::{
    CType, Image, Member, StructLayout, Symbol, SymbolVariables, TypeKind, Variable,
};

/// One build, as the judgement of lines reads it.
pub struct Side<'s, 'a, 'd> {
    pub image: &'a Image<'d>,
    /// Data symbols by place: `[global, per-CPU]`.
    pub index: &'s [SpaceIndex<'a, 'd>; 2],
    pub vars: &'s SymbolVariables<'a, 'd>,
    /// Its storage ranges, for the kernel's classifier of storage.
    pub regions: &'s Regions,
    /// The pairing of the two builds, and which of them this is: the
    /// same object has one key in both.
    pub pairing: &'s super::pairing::Pairing<'a, 'd>,
    pub which: super::changes::Side,
    /// Where its code evidence comes from: the image's own access map, or (a predicted
    /// build) none.
    pub code: bool,
    /// Its structs by name, to open embedded structs.
    pub names: &'s StructNames<'d>,
    /// How often its functions run.
    pub freq: &'s Frequencies,
}

/// What the judgement of lines needs besides the builds.
pub struct Judge<'s, 'a> {
    pub hotness: &'a Hotness,
    pub line_size: u64,
    /// Whether storage of a type is written by many CPUs by its kind
    /// (`HotTypes::is_write_type`), and whether its spelling names a lock, an atomic
    /// or a counter.
    pub types: &'s mut dyn TypeFacts,
    /// Each tenant's written members, by build and symbol index, kept across the
    /// objects one thread judges: neighbouring objects share tenants, and the members
    /// of one depend on nothing but its build.
    pub written: &'s mut WrittenMemo<'a>,
    /// Buffers kept across the objects one thread judges.
    pub scratch: &'s mut LineScratch<'a>,
}

/// `Judge::written`.
pub type WrittenMemo<'a> = FxHashMap<(usize, Option<usize>), Vec<LineMember<'a>>>;

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

/// What one thread's judgement of lines reuses from one object to the next instead of
/// allocating it again: the tenants on each line of the object's 128-byte pairs, the
/// object's members on the line at hand, and the members of each struct opened.
#[derive(Default)]
pub struct LineScratch<'a> {
    /// The other objects' parts on each line of `[lo, hi)` (`tenants_by_line`), by
    /// line from `lo`; only the first `lines` are in use.
    tenants: Vec<Vec<LineTenant<'a>>>,
    lines: usize,
    /// The object's members on each of its lines: which of its members, cut to which
    /// bytes (`members_by_line`).
    mine: Vec<Vec<(usize, u64, u64)>>,
    /// The typed members of one element of each struct met so far, by build and layout
    /// (`typed_parts`): a judgement opens thousands of objects of a few thousand types.
    /// Keyed by address: the images and their layouts are borrowed for `'a`, so none
    /// moves or is freed while this lives.
    members: FxHashMap<(usize, usize), Vec<Part<'a>>>,
}

impl<'a> LineScratch<'a> {
    /// The tenants on line `line`, where the lines start at `base`.
    fn on(&self, base: u64, line: u64) -> &[LineTenant<'a>] {
        match line.checked_sub(base) {
            Some(i) if (i as usize) < self.lines => &self.tenants[i as usize],
            _ => &[],
        }
    }
}

/// One of the object's members cut to a line: the member and its bytes there.
#[derive(Clone, Copy)]
struct Clipped<'m, 'a> {
    member: &'m LineMember<'a>,
    from: u64,
    to: u64,
}

impl<'a> Clipped<'_, 'a> {
    /// The member as `clip` makes it.
    fn owned(&self) -> LineMember<'a> {
        LineMember {
            from: self.from,
            to: self.to,
            ..self.member.clone()
        }
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
    let own_var = side.vars.of(s);
    let (own_members, hot_from) = own_members(judge, side, s, own_var, evidence);
    let has_hot = own_members.iter().any(|(_, m)| m.hot.is_some());
    let mut out = LinesOf {
        has_hot,
        hot_alone: has_hot,
        ..LinesOf::default()
    };
    tenants_by_line(judge, side, s, (lo, hi));
    let mut mine = std::mem::take(&mut judge.scratch.mine);
    members_by_line(
        &mut mine,
        &own_members,
        s.place,
        (p.first_line, p.last_line),
        ls,
    );
    for (line, on) in (p.first_line..=p.last_line).zip(&mine) {
        let here_mine = ClippedOf {
            members: &own_members,
            on,
        };
        add_line(
            &mut out,
            side,
            s,
            (ls, lo / ls),
            line,
            here_mine,
            judge.scratch,
        );
    }
    judge.scratch.mine = mine;
    (out, hot_from)
}

/// Fills `out` with the members of an object at `place` on each of its lines `first..=
/// last` (each member's index and its bytes there, `clip`), in member order, in its
/// first `last - first + 1` lists: the same
/// as asking `on_line` of every member for every line, without that product of the
/// two (an array of structs has many members on many lines).
fn members_by_line<M>(
    out: &mut Vec<Vec<(usize, u64, u64)>>,
    members: &[(M, LineMember<'_>)],
    place: u64,
    (first, last): (u64, u64),
    ls: u64,
) {
    let lines = (last - first + 1) as usize;
    // Lists past `lines` keep what an earlier object left: the caller reads `lines`.
    let kept = out.len().min(lines);
    out[..kept].iter_mut().for_each(Vec::clear);
    if out.len() < lines {
        out.resize_with(lines, Vec::new);
    }
    // A line's end past the top of the address space saturates in `on_line`: there,
    // ask it line by line.
    let exact = last
        .checked_add(1)
        .and_then(|l| l.checked_mul(ls))
        .is_some();
    for (i, (_, m)) in members.iter().enumerate() {
        let (lo, hi) = match exact {
            true => {
                let a = place.saturating_add(m.from);
                let b = place.saturating_add(m.to.max(m.from + 1));
                ((a / ls).max(first), ((b - 1) / ls).min(last))
            }
            false => (first, last),
        };
        for line in lo..=hi {
            if exact || on_line(m, place, line, ls) {
                let (from, to) = clip_range(m, place, line, ls);
                out[(line - first) as usize].push((i, from, to));
            }
        }
    }
}

/// The object's members on one line: `on` indexes `members` with the bytes there.
#[derive(Clone, Copy)]
struct ClippedOf<'m, 'a> {
    members: &'m [(Part<'a>, LineMember<'a>)],
    on: &'m [(usize, u64, u64)],
}

impl<'m, 'a> ClippedOf<'m, 'a> {
    fn iter(self) -> impl Iterator<Item = Clipped<'m, 'a>> + 'm {
        let members = self.members;
        self.on.iter().map(move |&(i, from, to)| Clipped {
            member: &members[i].1,
            from,
            to,
        })
    }
}

/// Fills `judge.scratch` with the written members of every other object on each line
/// of `[lo, hi)` (aliases of `s` and objects inside it left out); each tenant's
/// written members are found once per thread.
fn tenants_by_line<'a, 'd>(
    judge: &mut Judge<'_, 'a>,
    side: &Side<'_, 'a, 'd>,
    s: &'a Symbol<'d>,
    (lo, hi): (u64, u64),
) {
    let ls = judge.line_size;
    let (base, lines) = (lo / ls, (hi / ls - lo / ls) as usize);
    let scratch = &mut *judge.scratch;
    // Every list in use last time, and so every list, emptied.
    for v in &mut scratch.tenants[..scratch.lines] {
        v.clear();
    }
    if scratch.tenants.len() < lines {
        scratch.tenants.resize_with(lines, Vec::new);
    }
    scratch.lines = lines;
    let slot = usize::from(s.space == crate::model::Space::Percpu);
    let others = side.index[slot]
        .overlapping_iter(lo, hi)
        .filter(|t| t.size > 0 && !(t.place == s.place && t.size == s.size))
        .filter(|t| !(t.place >= s.place && t.place_end() <= s.place_end()));
    for t in others {
        let key = (side.which.index(), side.image.index_of(t));
        if !judge.written.contains_key(&key) {
            let var = side.vars.of(t);
            let members = written_members(judge, side, t, var);
            judge.written.insert(key, members);
        }
        let written = &judge.written[&key];
        let tp = crate::layout::place(t.place, t.size, ls);
        for line in tp.first_line.max(lo / ls)..=tp.last_line.min(hi / ls - 1) {
            let members: Vec<LineMember<'a>> = written
                .iter()
                .filter(|m| on_line(m, t.place, line, ls))
                .map(|m| clip(m, t.place, line, ls))
                .collect();
            let (from, to) = bytes_on(t.place, t.size, line, ls);
            judge.scratch.tenants[(line - base) as usize].push(LineTenant {
                name: SymbolName::of(t),
                key: side.pairing.key_id(side.which, t),
                place: t.place,
                from,
                to,
                members,
            });
        }
    }
}

/// Adds line `line` of object `s` (`mine`: its members there) to `out`: its hot
/// places, the line when it is shared or its members meet written ones, and those
/// meetings. `tenants_of` holds the other objects' parts on the lines from `base`.
fn add_line<'a, 'd>(
    out: &mut LinesOf<'a>,
    side: &Side<'_, 'a, 'd>,
    s: &'a Symbol<'d>,
    (ls, base): (u64, u64),
    line: u64,
    mine: ClippedOf<'_, 'a>,
    tenants_of: &LineScratch<'a>,
) {
    let here = tenants_of.on(base, line);
    let any_hot = mine.iter().any(|m| m.member.hot.is_some());
    if !here.is_empty() && any_hot {
        out.hot_alone = false;
    }
    for m in mine.iter().filter(|m| m.member.hot.is_some()) {
        if out.hot.len() < HOT_PLACES {
            out.hot.push(HotPlace {
                line: line.saturating_mul(ls),
                member: m.owned(),
                alone: here.is_empty(),
            });
        }
    }
    let partner = tenants_of.on(base, line ^ 1);
    let (at, pair_at) = (line.saturating_mul(ls), (line ^ 1).saturating_mul(ls));
    let met = match any_hot {
        true => meetings(mine, at, here, at, false)
            .chain(meetings(mine, at, partner, pair_at, true))
            .collect::<Vec<_>>(),
        false => Vec::new(),
    };
    let met_here = met.iter().any(|m| !m.adjacent);
    if !here.is_empty() || !met.is_empty() {
        let (from, to) = bytes_on(s.place, s.size, line, ls);
        let mut tenants = vec![LineTenant {
            name: SymbolName::of(s),
            key: side.pairing.key_id(side.which, s),
            place: s.place,
            from,
            to,
            members: mine.iter().map(|m| m.owned()).collect(),
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

/// The meetings of `mine` (the object's members on the line starting at `line`) with
/// the written members of `tenants` (on the line starting at `their_line`).
fn meetings<'m, 'a: 'm, 'd>(
    mine: ClippedOf<'m, 'a>,
    line: u64,
    tenants: &'m [LineTenant<'a>],
    their_line: u64,
    adjacent: bool,
) -> impl Iterator<Item = Meeting<'a>> + 'm {
    mine.iter()
        .filter(|h| h.member.hot.is_some())
        .flat_map(move |h| {
            tenants.iter().flat_map(move |t| {
                t.members
                    .iter()
                    .filter(|w| w.written.is_some())
                    .map(move |w| {
                        let hot = h.owned();
                        Meeting {
                            line,
                            tie: Tie::of(&hot, w),
                            hot,
                            neighbour: t.name,
                            neighbour_key: t.key,
                            neighbour_line: their_line,
                            written: w.clone(),
                            adjacent,
                        }
                    })
            })
        })
}

/// Whether member `m` of an object at `place` has bytes on `line`.
fn on_line(m: &LineMember<'_>, place: u64, line: u64, ls: u64) -> bool {
    let (a, b) = (
        place.saturating_add(m.from),
        place.saturating_add(m.to.max(m.from + 1)),
    );
    a < (line + 1).saturating_mul(ls) && b > line.saturating_mul(ls)
}

/// Member `m` cut to its bytes on `line`.
fn clip<'a>(m: &LineMember<'a>, place: u64, line: u64, ls: u64) -> LineMember<'a> {
    let (from, to) = clip_range(m, place, line, ls);
    LineMember {
        from,
        to,
        ..m.clone()
    }
}

/// The bytes of member `m` (of an object at `place`) on `line`, as `clip` cuts them.
fn clip_range(m: &LineMember<'_>, place: u64, line: u64, ls: u64) -> (u64, u64) {
    let (lo, hi) = (line.saturating_mul(ls), (line + 1).saturating_mul(ls));
    let from = place.saturating_add(m.from).max(lo) - place;
    let to = place
        .saturating_add(m.to)
        .min(hi)
        .saturating_sub(place)
        .max(from);
    (from, to)
}

/// The bytes of an object at `place` of `size` that lie on `line`, as offsets into it.
fn bytes_on(place: u64, size: u64, line: u64, ls: u64) -> (u64, u64) {
    let (lo, hi) = (line.saturating_mul(ls), (line + 1).saturating_mul(ls));
    let from = place.max(lo) - place;
    let to = place
        .saturating_add(size.max(1))
        .min(hi)
        .saturating_sub(place);
    (from, to.max(from))
}

/// One member of an object as the judgement sees it: a name, a byte range, a type.
#[derive(Clone)]
struct Part<'a> {
    name: Cow<'a, str>,
    from: u64,
    to: u64,
    ty: Option<&'a CType>,
    member: Option<&'a Member<'a>>,
    /// The struct that declares the member (an embedded struct's own type for
    /// `ns.count`), for the known members of that type.
    owner: Option<&'a str>,
    /// Where the name's member path starts (after an array element's `[3].`), and the
    /// member's offset in its element.
    path_at: usize,
    in_element: u64,
    /// Its type is a lock, an atomic, a refcount or a counter (`Judge::write_type`).
    write_type: bool,
    /// The evidence naming it as a member (`member_evidence`), found with its type.
    evidence: Option<Evidence<'a>>,
}

/// How deep embedded structs are opened (`ns.count` is one level).
const EMBED_DEPTH: usize = 4;

/// An object's members: its struct's leaf members, embedded named structs opened down
/// to their own members (`ratelimit.lock`, `ns.count`) unless the embedded type is
/// itself a lock, an atomic or a counter (`spinlock_t` stays one member); each
/// element's for an array of structs, up to 64 elements; else the object itself.
/// Each part is marked whether its type is a lock, an atomic, a refcount or a counter.
fn typed_parts<'a, 'd>(
    judge: &mut Judge<'_, 'a>,
    side: &Side<'_, 'a, 'd>,
    s: &'a Symbol<'d>,
    var: Option<&'a Variable<'d>>,
) -> Vec<Part<'a>> {
    let image = side.image;
    let Some(layout) = var.and_then(|v| v.layout).map(|id| image.struct_by_id(id)) else {
        return vec![whole_part(judge, image, s, var)];
    };
    // A lock, an atomic or a counter is one member, as inside a struct (`oom_lock`,
    // not its `owner` and `wait_lock`); an array of them is one member an element.
    if var.is_some_and(|v| !v.is_array && judge.types.hot_name(&v.ctype)) {
        return vec![whole_part(judge, image, s, var)];
    }
    // The element's members are found once per build and struct, and laid at each
    // element's offset.
    let key = (
        image as *const Image<'_> as usize,
        layout as *const StructLayout<'_> as usize,
    );
    let (types, hotness) = (&mut *judge.types, judge.hotness);
    let first = judge.scratch.members.entry(key).or_insert_with(|| {
        let mut first = Vec::new();
        open(types, side, layout, 0, "", 0, &mut first);
        let struct_name = Some(layout.name).filter(|n| !n.is_empty());
        for p in &mut first {
            p.write_type = p.ty.is_some_and(|t| types.is_write_type(t));
            p.evidence = member_evidence(hotness, struct_name, p);
        }
        first
    });
    if first.is_empty() {
        return vec![whole_part(judge, image, s, var)];
    }
    if !var.is_some_and(|v| v.is_array) {
        return first.clone();
    }
    let element = layout.size.max(1);
    let count = (s.size / element).clamp(1, 64);
    let mut out = Vec::with_capacity(first.len() * count as usize);
    for i in 0..count {
        // Names are joined with `concat`, not `format!`: a judgement spells hundreds of
        // thousands of them.
        let prefix = ["[", itoa::Buffer::new().format(i), "]."].concat();
        let at = i * element;
        out.extend(first.iter().map(|p| Part {
            name: Cow::Owned([prefix.as_str(), &p.name].concat()),
            from: at.saturating_add(p.from),
            to: at.saturating_add(p.to),
            path_at: prefix.len(),
            in_element: p.from,
            ..*p
        }));
    }
    out
}

/// The object `s` as one part: no struct to open, or a lock, an atomic or a counter.
fn whole_part<'a>(
    judge: &mut Judge<'_, 'a>,
    image: &'a Image<'_>,
    s: &'a Symbol<'_>,
    var: Option<&'a Variable<'_>>,
) -> Part<'a> {
    let ty = var.map(|v| &*v.ctype);
    let mut part = Part {
        name: Cow::Borrowed(s.name),
        from: 0,
        to: s.size.max(1),
        ty,
        member: None,
        owner: None,
        path_at: 0,
        in_element: 0,
        write_type: ty.is_some_and(|t| judge.types.is_write_type(t)),
        evidence: None,
    };
    let struct_name = var.and_then(|v| image.struct_name(v));
    part.evidence = member_evidence(judge.hotness, struct_name, &part);
    part
}

/// The leaf members of `layout` laid at `base`, named after `prefix`, into `out`.
fn open<'a, 'd>(
    types: &mut dyn TypeFacts,
    side: &Side<'_, 'a, 'd>,
    layout: &'a StructLayout<'d>,
    base: u64,
    prefix: &str,
    depth: usize,
    out: &mut Vec<Part<'a>>,
) {
    for m in leaves(layout) {
        let Some(name) = m.name else { continue };
        let from = base.saturating_add(m.offset);
        let inner = embedded(types, side, m).filter(|_| depth < EMBED_DEPTH);
        if let Some(inner) = inner {
            let before = out.len();
            open(
                types,
                side,
                inner,
                from,
                &[prefix, name, "."].concat(),
                depth + 1,
                out,
            );
            if out.len() > before {
                continue;
            }
        }
        out.push(Part {
            name: match prefix.is_empty() {
                true => Cow::Borrowed(name),
                false => Cow::Owned([prefix, name].concat()),
            },
            from,
            to: from.saturating_add(m.size.max(1)),
            ty: Some(&*m.ctype),
            member: Some(m),
            owner: Some(layout.name).filter(|n| !n.is_empty()),
            path_at: 0,
            in_element: from,
            write_type: false,
            evidence: None,
        });
    }
}

/// The layout of a member that embeds a named struct (not an array, not a pointer, not
/// a lock or an atomic by its type's name), of the member's size.
fn embedded<'a, 'd>(
    types: &mut dyn TypeFacts,
    side: &Side<'_, 'a, 'd>,
    m: &Member<'d>,
) -> Option<&'a StructLayout<'d>> {
    let ty = &*m.ctype;
    if ty.kind != TypeKind::Struct || !ty.dims.is_empty() || types.hot_name(ty) {
        return None;
    }
    let id = *side.names.get(ty.aggregate.as_deref()?)?;
    let inner = side.image.struct_by_id(id);
    (inner.size == m.size && !inner.members.is_empty()).then_some(inner)
}

/// Evidence naming a part: as a member of the object's struct (`user_namespace` and
/// `ns.count`, at its offset in the object), else as a member of the embedded struct
/// that declares it (`ns_common.count`).
fn member_evidence<'a>(
    hotness: &'a Hotness,
    struct_name: Option<&str>,
    p: &Part<'_>,
) -> Option<Evidence<'a>> {
    let path = p.name.get(p.path_at..).unwrap_or(&p.name);
    let outer = struct_name.and_then(|t| hotness.member(t, path, p.in_element));
    let leaf = p.member.and_then(|m| m.name);
    let own = match (p.owner, leaf) {
        (Some(o), Some(m)) if Some(o) != struct_name => hotness.member(o, m, u64::MAX),
        _ => None,
    };
    outer.or(own)
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
        .filter(|a| a.kind.writes())
        .filter_map(|a| {
            let f = image.symbols.get(a.function as usize)?;
            let e = hotness.function(f.name)?;
            Some((e.strength(), std::cmp::Reverse(f.name)))
        })
        .max()
        .map(|(strength, std::cmp::Reverse(function))| Evidence::WrittenBy { function, strength })
}

/// One write of the code to an object: its bytes `[from, to)`, the function and how.
/// `by_address`: the object's address handed to a function that writes through it,
/// where the member written is not known.
#[derive(Clone, Copy)]
struct CodeWrite<'a, 'd> {
    from: u64,
    to: u64,
    function: &'a Symbol<'d>,
    /// The function's index in its image.
    index: u32,
    how: AccessKind,
    by_address: bool,
    /// The function's own evidence of hotness, if any.
    hot: Option<Evidence<'a>>,
    /// How often the function runs.
    freq: Frequency,
}

/// The code's writes to object `s` (of type `ty`, when known) by functions outside
/// boot-only code, by function name and how (in the access map's order where those are
/// equal), each with its function's evidence of hotness and frequency; and whether any
/// code references the object at all. `None` when the build has no code evidence. The
/// writes of once-only storage (`kernel::Class::Once`, by its section or by the
/// code's shape) are rare, whoever makes them.
fn code_writes<'a, 'd>(
    hotness: &'a Hotness,
    side: &Side<'_, 'a, 'd>,
    s: &Symbol<'d>,
    ty: Option<&CType>,
) -> Option<(bool, Vec<CodeWrite<'a, 'd>>)> {
    let image = side.image;
    if !side.code || !image.access.supported {
        return None;
    }
    let i = u32::try_from(image.index_of(s)?).ok()?;
    let refs = image.access.of_object(i);
    let once = side.regions.classify_written(image, i, s, ty).class == Class::Once;
    let mut writes: Vec<CodeWrite<'a, 'd>> = refs
        .iter()
        .filter(|a| a.kind.writes())
        .filter_map(|a| {
            let f = image.symbols.get(a.function as usize)?;
            let boot = crate::kernel::is_boot_code(f.section);
            let by_address = matches!(a.kind, AccessKind::Address { .. });
            // An indexed operand runs through an array's elements: the member written
            // is not known, so the object from that offset on counts as written.
            let to = match by_address || a.indexed {
                true => s.size.max(1),
                false => a.offset.saturating_add(u64::from(a.size.max(1))),
            };
            let freq = match once {
                true => Frequency::Rare(Seldom::Once),
                false => side.freq.get(a.function),
            };
            (!boot).then(|| CodeWrite {
                from: a.offset,
                to,
                function: f,
                index: a.function,
                how: a.kind,
                by_address,
                hot: hotness.function(f.name),
                freq,
            })
        })
        .collect();
    // Stable: writes of one function and kind stay in the access map's order.
    writes.sort_by(|a, b| (a.function.name, a.how).cmp(&(b.function.name, b.how)));
    Some((!refs.is_empty(), writes))
}

/// Who writes one part of an object (`writer_of`).
struct PartWriters<'a, 'd> {
    /// The writer named for it: the most frequent, then the one with the strongest
    /// evidence of hotness, then the first by name.
    named: &'a Symbol<'d>,
    how: AccessKind,
    /// How many functions write it.
    count: u32,
    /// The named writer's evidence of hotness.
    hot: Option<Evidence<'a>>,
    /// The named writer's frequency.
    freq: Frequency,
    /// Every writer, by index, sorted, each once.
    all: Vec<u32>,
}

/// The writers of part `[from, to)` among `writes`. A write through the object's
/// address reaches the part only when `by_address` allows it: the helpers that take an
/// address and write through it are the lock, atomic, refcount and counter
/// operations, so it is counted on the object's members of those types, or on all of
/// them when it has none.
fn writer_of<'a, 'd>(
    writes: &[CodeWrite<'a, 'd>],
    (from, to): (u64, u64),
    by_address: bool,
) -> Option<PartWriters<'a, 'd>> {
    // `writes` is in name order (`code_writes`), and so is every part of it.
    let mut here = writes
        .iter()
        .filter(|w| w.from < to && w.to > from && (by_address || !w.by_address));
    let first = here.next()?;
    let (mut names, mut last) = (1u32, first.function.name);
    let mut best = first;
    let mut all = vec![first.index];
    for w in here {
        if w.function.name != last {
            names += 1;
            last = w.function.name;
        }
        all.push(w.index);
        // The greatest key, the first by name on a tie.
        if writer_key(w) > writer_key(best) {
            best = w;
        }
    }
    all.sort_unstable();
    all.dedup();
    Some(PartWriters {
        named: best.function,
        how: best.how,
        count: names,
        hot: best.hot,
        freq: best.freq,
        all,
    })
}

/// What ranks the writers of a part: how often they run, then the strength of their
/// evidence of hotness.
fn writer_key(w: &CodeWrite<'_, '_>) -> (u8, Option<Strength>) {
    (w.freq.rank(), w.hot.map(|e| e.strength()))
}

/// Which of `parts` a write through the object's address reaches (`writer_of`): its
/// write-type members, or every part when it has none.
fn address_reaches(parts: &[Part<'_>]) -> Vec<bool> {
    let any = parts.iter().any(|p| p.write_type);
    parts.iter().map(|p| p.write_type || !any).collect()
}

/// The object's own members with their hot roles, and which rule gave them.
#[allow(clippy::type_complexity)]
fn own_members<'a, 'd>(
    judge: &mut Judge<'_, 'a>,
    side: &Side<'_, 'a, 'd>,
    s: &'a Symbol<'d>,
    var: Option<&'a Variable<'d>>,
    evidence: ObjectEvidence<'a>,
) -> (Vec<(Part<'a>, LineMember<'a>)>, &'static str) {
    let parts = typed_parts(judge, side, s, var);
    let reach = address_reaches(&parts);
    let writes = code_writes(judge.hotness, side, s, var.map(|v| &*v.ctype))
        .map(|w| w.1)
        .unwrap_or_default();
    let mut named = false;
    let mut out: Vec<(Part<'a>, LineMember<'a>)> = parts
        .into_iter()
        .zip(reach)
        .map(|(p, reach)| {
            let member_evidence = p.evidence;
            let part = writer_of(&writes, (p.from, p.to), reach);
            let by_writer = part.as_ref().and_then(|w| {
                w.hot.map(|evidence| Hot::Writer {
                    function: w.named.name,
                    evidence,
                })
            });
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
                writers: part.map(|w| w.all).unwrap_or_default(),
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
        if p.write_type {
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
    let ty = var.map(|v| &*v.ctype);
    if !side.regions.classify(t, ty).at_run_time()
        || crate::evidence::cold::of(t.name, t.section, type_name).is_some()
    {
        return Vec::new();
    }
    let code = code_writes(judge.hotness, side, t, ty);
    let own = judge
        .hotness
        .object(t.name, var.and_then(|v| image.struct_name(v)))
        .filter(|e| e.strength() >= Strength::Known);
    let (touched, writes) = code.unwrap_or_default();
    let refs = match image.index_of(t).and_then(|i| u32::try_from(i).ok()) {
        Some(i) if touched => image.access.of_object(i),
        _ => &[],
    };
    let parts = typed_parts(judge, side, t, var);
    // Known hot as a whole: written where its locks and atomics lie, or everywhere
    // when it has none (a plain counter such as `total_forks`).
    let whole = own.is_some() && !parts.iter().any(|p| p.write_type);
    let reach = address_reaches(&parts);
    let mut out = Vec::new();
    for (p, reach) in parts.into_iter().zip(reach) {
        let part = writer_of(&writes, (p.from, p.to), reach);
        let mut all = Vec::new();
        let written = if let Some(w) = part {
            all = frequent_writers(&writes, &w.all);
            let via = match w.freq {
                Frequency::Frequent(crate::evidence::frequency::Often::CalledBy { caller }) => {
                    image.symbols.get(caller as usize).map(|c| c.name)
                }
                _ => None,
            };
            Some(Written::Code {
                function: w.named.name,
                how: w.how,
                writers: w.count,
                hot: w.hot.map(|e| e.strength()),
                freq: w.freq,
                via,
            })
        } else if whole {
            own.map(|evidence| Written::Evidence { evidence })
        } else if !p.write_type
            || crate::kernel::sleeping_lock(p.ty.map_or("", |ty| &*ty.c)).is_some()
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
                writers: all,
            });
        }
    }
    out
}

/// Of the writers `all` (indexes, sorted), those that run frequently by evidence.
fn frequent_writers(writes: &[CodeWrite<'_, '_>], all: &[u32]) -> Vec<u32> {
    let mut out: Vec<u32> = writes
        .iter()
        .filter(|w| w.freq.is_frequent() && all.binary_search(&w.index).is_ok())
        .map(|w| w.index)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::super::hot::HotTypes;
    use super::*;
    use crate::evidence::Measured;

    /// What a judgement reads of a part.
    type PartFacts = (String, u64, u64, bool, Option<String>);

    fn facts(parts: Vec<Part<'_>>) -> Vec<PartFacts> {
        parts
            .into_iter()
            .map(|p| {
                let evidence = p.evidence.map(|e| format!("{e:?}"));
                (p.name.into_owned(), p.from, p.to, p.write_type, evidence)
            })
            .collect()
    }

    /// `typed_parts` of `s` judged with `types` and `scratch`, as facts.
    fn parts_of<'a>(
        side: &Side<'_, 'a, '_>,
        hotness: &'a Hotness,
        types: &mut HotTypes<'_, '_>,
        scratch: &mut LineScratch<'a>,
        s: &'a Symbol<'_>,
    ) -> Vec<PartFacts> {
        let mut written = WrittenMemo::default();
        let mut judge = Judge {
            hotness,
            line_size: 64,
            types,
            written: &mut written,
            scratch,
        };
        facts(typed_parts(&mut judge, side, s, side.vars.of(s)))
    }

    /// Every data object of the fixture build has the same parts (names, bytes, write
    /// types, member evidence) whether one judge opened other objects of its struct
    /// first (the members of each struct are kept, `LineScratch::members`) or a fresh
    /// judge opens it alone.
    #[test]
    fn an_objects_parts_do_not_depend_on_the_objects_opened_before() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/new.elf");
        let file = crate::InputFile::open(std::path::Path::new(path)).unwrap();
        let image = file.load(&crate::LoadOptions::default()).unwrap();
        let ix = super::super::placement::Indexes::new(&image, &image, crate::evidence::builtin());
        let pairing = super::super::pairing::pair(&image.symbols, &image.symbols);
        let side = Side {
            image: &image,
            index: &ix.new_index,
            vars: &ix.new_vars,
            regions: &ix.regions,
            pairing: &pairing,
            which: super::super::changes::Side::New,
            code: image.access.supported,
            names: &ix.new_names,
            freq: &ix.new_freq,
        };
        let hotness = crate::evidence::builtin();
        let objects: Vec<&Symbol<'_>> = image
            .symbols
            .iter()
            .filter(|s| s.kind != crate::model::SymbolKind::Function && s.size > 0)
            .collect();
        let mut types = HotTypes::sharing(&image, &ix.new_names);
        let mut shared = LineScratch::default();
        let in_turn: Vec<Vec<PartFacts>> = objects
            .iter()
            .map(|s| parts_of(&side, hotness, &mut types, &mut shared, s))
            .collect();
        let alone: Vec<Vec<PartFacts>> = objects
            .iter()
            .map(|s| {
                let mut types = HotTypes::sharing(&image, &ix.new_names);
                parts_of(&side, hotness, &mut types, &mut LineScratch::default(), s)
            })
            .collect();
        assert_eq!(in_turn, alone);
        // Objects, those opened into more than one part, and the structs opened for
        // them: fewer structs than objects, so some were opened from the kept members.
        let opened = in_turn.iter().filter(|parts| parts.len() > 1).count();
        assert_eq!((objects.len(), opened, shared.members.len()), (48, 19, 18));
    }

    fn function(name: &'static str, place: u64) -> Symbol<'static> {
        Symbol {
            kind: crate::model::SymbolKind::Function,
            section: ".text",
            ..Symbol::test_object(name, place, 16)
        }
    }

    /// The writer of a part is the one with the strongest evidence, the first by
    /// name among equals, else the first by name; every function writing there is
    /// counted once; a write through the object's address counts only where allowed.
    #[test]
    fn the_writer_of_a_part_is_the_hottest_then_the_first_by_name() {
        let (a, b, c, z) = (
            function("a_fn", 0x10),
            function("b_fn", 0x20),
            function("c_fn", 0x30),
            function("z_fn", 0x40),
        );
        let mut measured = Measured::default();
        for n in ["b_fn", "c_fn"] {
            measured.add_function(n, "perf report", "10%".to_string());
        }
        let hotness = Hotness {
            known: crate::evidence::KnownList::builtin(),
            measured,
        };
        fn write<'a>(
            hotness: &'a Hotness,
            f: &'a Symbol<'static>,
            (from, to): (u64, u64),
            by_address: bool,
        ) -> CodeWrite<'a, 'static> {
            let hot = hotness.function(f.name);
            let freq = match hot {
                Some(e) => Frequency::Frequent(crate::evidence::frequency::Often::Evidence {
                    strength: e.strength(),
                }),
                None => Frequency::Unknown,
            };
            CodeWrite {
                from,
                to,
                function: f,
                index: f.place as u32,
                how: AccessKind::Write,
                by_address,
                hot,
                freq,
            }
        }
        let h = &hotness;
        // In name order, as `code_writes` gives them: a twice, then b, c, z.
        let writes = [
            write(h, &a, (0, 8), false),
            write(h, &a, (4, 8), false),
            write(h, &b, (0, 4), false),
            write(h, &c, (0, 8), false),
            write(h, &z, (0, 64), true),
        ];
        let said = |range, by_address| {
            writer_of(&writes, range, by_address).map(|w| (w.named.name, w.count, w.hot.is_some()))
        };
        // b and c are equally hot: b, the first by name; a, b, c write [0, 8).
        assert_eq!(said((0, 8), false), Some(("b_fn", 3, true)));
        // Only a and c reach [4, 8): c is hot.
        assert_eq!(said((4, 8), false), Some(("c_fn", 2, true)));
        // Past every direct write: z's write through the address, when it reaches.
        assert_eq!(said((16, 24), false), None);
        assert_eq!(said((16, 24), true), Some(("z_fn", 1, false)));
        // No hot writer among a and z: a, the first by name.
        let cold = [writes[0], writes[4]];
        assert_eq!(
            writer_of(&cold, (0, 8), true).map(|w| (w.named.name, w.count)),
            Some(("a_fn", 2))
        );
    }
}
