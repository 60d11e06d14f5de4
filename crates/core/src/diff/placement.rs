//! Placement changes of paired symbols: data objects (globals and per-CPU variables)
//! with their lines, pair offsets and co-tenants, and functions with their phase.

use rustc_hash::FxHashMap;

use super::changes::{
    FunctionChange, MemberLines, Pair, PlacementChange, Severity, Side, SymbolName, Tenant,
};
use super::hot::{HotTypes, StructNames};
use super::pairing::{Paired, Pairing};
use super::same::SameTypes;
use super::sharing;
use super::structs::leaves;
use super::verdict::{self, ObjectFacts};
use crate::evidence::frequency::Frequencies;
use crate::evidence::{Declared, Evidence, Hotness};
use crate::kernel::{Class, Regions};
use crate::layout::{Placement, SpaceIndex, place};
use crate::model::{
    Image, Space, StructId, StructLayout, Symbol, SymbolKind, SymbolVariables, Variable,
};

/// What judging a paired data object looks up in each build: its line indexes and
/// variables by address (built beside the pairing, which they do not need).
pub struct Indexes<'a, 'd> {
    pub old_index: [SpaceIndex<'a, 'd>; 2],
    pub new_index: [SpaceIndex<'a, 'd>; 2],
    /// Each build's variables by address.
    pub old_vars: SymbolVariables<'a, 'd>,
    pub new_vars: SymbolVariables<'a, 'd>,
    /// The kernel's storage ranges in the new build (boot-only, read-mostly, ...).
    pub regions: Regions,
    /// The same of the old build.
    pub old_regions: Regions,
    /// Each build's structs by name (the first of each name).
    pub old_names: StructNames<'d>,
    pub new_names: StructNames<'d>,
    /// How often each build's functions run.
    pub old_freq: Frequencies,
    pub new_freq: Frequencies,
}

impl<'a, 'd> Indexes<'a, 'd> {
    pub fn new(old: &'a Image<'d>, new: &'a Image<'d>, hotness: &Hotness) -> Self {
        // Each build's as a task of its own, so that a thread done with its share of the
        // diff can take the second.
        let build = |image: &'a Image<'d>| {
            (
                [
                    SpaceIndex::data(&image.symbols, Space::Global),
                    SpaceIndex::data(&image.symbols, Space::Percpu),
                ],
                image.variables_of_symbols(),
                super::hot::struct_names(image),
                Frequencies::of(image, hotness),
            )
        };
        let (
            (old_index, old_vars, old_names, old_freq),
            (new_index, new_vars, new_names, new_freq),
        ) = rayon::join(|| build(old), || build(new));
        Indexes {
            old_index,
            new_index,
            old_vars,
            new_vars,
            regions: Regions::of(new),
            old_regions: Regions::of(old),
            old_names,
            new_names,
            old_freq,
            new_freq,
        }
    }

    /// `Indexes::new(old, new)`, OLD's indexes found beforehand (`judge::OldSide`).
    pub fn with_old(old: OldIndexes<'a, 'd>, new: &'a Image<'d>, hotness: &Hotness) -> Self {
        let (old_index, old_vars, old_names, old_regions, old_freq) = old;
        Indexes {
            old_freq,
            new_freq: Frequencies::of(new, hotness),
            old_index,
            new_index: [
                SpaceIndex::data(&new.symbols, Space::Global),
                SpaceIndex::data(&new.symbols, Space::Percpu),
            ],
            old_vars,
            new_vars: new.variables_of_symbols(),
            regions: Regions::of(new),
            old_regions,
            old_names,
            new_names: super::hot::struct_names(new),
        }
    }
}

/// One build's part of `Indexes`: its line indexes, variables, structs by name, storage
/// ranges and its functions' frequencies.
pub type OldIndexes<'a, 'd> = (
    [SpaceIndex<'a, 'd>; 2],
    SymbolVariables<'a, 'd>,
    StructNames<'d>,
    Regions,
    Frequencies,
);

/// `image`'s part of `Indexes` as the old build.
pub fn old_indexes<'a, 'd>(image: &'a Image<'d>, hotness: &Hotness) -> OldIndexes<'a, 'd> {
    (
        [
            SpaceIndex::data(&image.symbols, Space::Global),
            SpaceIndex::data(&image.symbols, Space::Percpu),
        ],
        image.variables_of_symbols(),
        super::hot::struct_names(image),
        Regions::of(image),
        Frequencies::of(image, hotness),
    )
}

/// Both builds with their pairing and indexes.
pub struct Sides<'p, 'a, 'd> {
    pub pairing: &'p Pairing<'a, 'd>,
    pub old: &'a Image<'d>,
    pub new: &'a Image<'d>,
    pub line_size: u64,
    /// Known and measured evidence of hotness.
    pub hotness: &'a Hotness,
    pub ix: Indexes<'a, 'd>,
}

impl<'a, 'd> Sides<'_, 'a, 'd> {
    /// The two builds as the judgement of lines reads them.
    fn line_sides(&self) -> (sharing::Side<'_, 'a, 'd>, sharing::Side<'_, 'a, 'd>) {
        (
            sharing::Side {
                image: self.old,
                index: &self.ix.old_index,
                vars: &self.ix.old_vars,
                regions: &self.ix.old_regions,
                pairing: self.pairing,
                which: Side::Old,
                code: self.old.access.supported,
                names: &self.ix.old_names,
                freq: &self.ix.old_freq,
            },
            sharing::Side {
                image: self.new,
                index: &self.ix.new_index,
                vars: &self.ix.new_vars,
                regions: &self.ix.regions,
                pairing: self.pairing,
                which: Side::New,
                code: self.new.access.supported,
                names: &self.ix.new_names,
                freq: &self.ix.new_freq,
            },
        )
    }
}

fn slot(space: Space) -> usize {
    match space {
        Space::Global => 0,
        Space::Percpu => 1,
    }
}

/// What one thread's judging of data objects keeps from one object to the next.
#[derive(Default)]
pub struct Scratch<'a, 'd> {
    /// Where the last search ended in each build's (old, new) index of each space:
    /// objects come in old place order, so the next one's neighbours are near.
    near: [[usize; 2]; 2],
    /// The object's neighbours in each build and their keys, refilled for each object
    /// (most objects are unchanged, and four new lists for each were wasted).
    syms: [Vec<&'a Symbol<'d>>; 2],
    keys: [Vec<u32>; 2],
    /// The written members of each tenant met so far (`sharing::Judge::written`).
    written: sharing::WrittenMemo<'a>,
    /// The buffers of the judgement of lines (`sharing::Judge::scratch`).
    lines: sharing::LineScratch<'a>,
}

/// Fills `out` with every other symbol on the lines `s` occupies (what `co_tenants`
/// splits by line, taken at once), searching `index` from `near`. Zero-size symbols
/// and aliases (same place and size as the object) share nothing.
fn tenants<'a, 'd>(
    index: &SpaceIndex<'a, 'd>,
    near: &mut usize,
    s: &Symbol<'d>,
    line_size: u64,
    out: &mut Vec<&'a Symbol<'d>>,
) {
    let p = place(s.place, s.size, line_size);
    let lo = p.first_line * line_size;
    let hi = p.last_line.saturating_add(1).saturating_mul(line_size);
    out.clear();
    out.extend(index.overlapping_near(near, lo, hi).filter(|t| {
        // Names compared last: only a symbol at the same place but of another size
        // can be `s` itself under another entry.
        t.size > 0
            && !(t.place == s.place && (t.size == s.size || (t.name == s.name && t.file == s.file)))
    }));
    out.sort_by(|a, b| (a.place, a.size, a.name).cmp(&(b.place, b.size, b.name)));
    // One entry per object: aliases (same place and size) collapse to the first name.
    out.dedup_by(|a, b| a.place == b.place && a.size == b.size);
}

/// What identifies a neighbour in both builds: its unit path (or file) and its name
/// with clone numbers removed, so renumbered or re-suffixed neighbours are not a change.
/// That is the pairing key (co-tenants are data of one space), so its id stands for
/// it: this runs for every co-tenant of every paired object.
fn tenant_keys(pairing: &Pairing<'_, '_>, side: Side, t: &[&Symbol<'_>], out: &mut Vec<u32>) {
    out.clear();
    out.extend(t.iter().map(|s| pairing.key_id(side, s)));
    out.sort_unstable();
}

/// Whether an old and a new struct layout are equal, remembered per pair of ids: many
/// objects share a type, and comparing two layouts walks every member. Likewise the
/// members that change line, per pair of ids and of offsets in the line.
#[derive(Default)]
pub struct SameLayouts<'a> {
    layouts: FxHashMap<(StructId, StructId), bool>,
    types: SameTypes,
    member_lines: FxHashMap<(StructId, StructId, u64, u64), Vec<MemberLines<'a>>>,
}

/// The placement change of a paired data object, or `None` when nothing changed.
pub fn data_change<'a, 'd>(
    sides: &Sides<'_, 'a, 'd>,
    p: &Paired<'a, 'd>,
    hot: &mut HotTypes<'_, '_>,
    same: &mut SameLayouts<'a>,
    scratch: &mut Scratch<'a, 'd>,
    pinned: bool,
) -> Option<PlacementChange<'a>> {
    let ls = sides.line_size;
    let (o, n) = (p.old, p.new);
    // A zero-size symbol (a marker, `__key.N`) has no storage to place.
    if o.size == 0 && n.size == 0 && !pinned {
        return None;
    }
    let old = place(o.place, o.size, ls);
    let new = place(n.place, n.size, ls);
    let (co_changed, sharing_grew) = find_tenants(sides, p, scratch);
    let moved = o.place != n.place || o.size != n.size;
    if !moved && !co_changed && !pinned {
        return None;
    }
    let t = Typed::of(sides, p, hot);
    let evidence = object_evidence(sides, (o, n), &t);
    let member_lines = member_lines(sides, (o, n), (t.var_old, t.var_new), same);
    let old_evidence = evidence.filter(|_| t.is_writable);
    let sharing = old_evidence
        .is_some()
        .then(|| judge_lines(sides, hot, scratch, p, old_evidence));
    let mut change = PlacementChange {
        name: SymbolName::of(n),
        space: n.space,
        section: n.section,
        type_name: t.type_name,
        place: Pair {
            old: o.place,
            new: n.place,
        },
        size: Pair {
            old: o.size,
            new: n.size,
        },
        delta: p.delta(),
        line_size: ls,
        old_tenants: scratch.syms[0].len(),
        tenants: scratch.syms.iter().flatten().map(|&t| Tenant(t)).collect(),
        co_tenants_changed: co_changed,
        sharing_grew,
        write_hot_type: t.hot_members > 0,
        hot_members: t.hot_members,
        written_neighbours: written_neighbours(sharing.as_deref()),
        sharing,
        explicit_alignment: t.explicit_alignment,
        run: None,
        member_lines,
        evidence,
        cold: t.cold,
        // Decided below, from the facts of the change.
        decision: UNDECIDED,
        severity: Severity::Data,
        changed: moved || co_changed,
        flagged: false,
        quiet: t.quiet,
    };
    judge(&mut change, &old, &new);
    Some(change)
}

/// What the variables of a paired data object (the new build's first) and the
/// conventions say of it.
struct Typed<'v, 'd> {
    var_old: Option<&'v Variable<'d>>,
    var_new: Option<&'v Variable<'d>>,
    type_name: Option<&'v str>,
    /// The lifetime of its storage (boot-only, ...), if it has one.
    quiet: Option<&'static str>,
    /// Its bytes are not read-only (`kernel::Storage::read_only`).
    writable: bool,
    /// Its storage is written at run time (`kernel::Storage::at_run_time`).
    is_writable: bool,
    /// How many of its type's members are write-hot (when it is writable).
    hot_members: usize,
    explicit_alignment: Option<u64>,
    cold: Option<crate::evidence::Cold>,
}

impl<'v, 'd> Typed<'v, 'd> {
    /// The facts of pair `p`.
    fn of(sides: &Sides<'_, 'v, 'd>, p: &Paired<'v, 'd>, hot: &mut HotTypes<'_, '_>) -> Self {
        let (o, n) = (p.old, p.new);
        let var_new = sides.ix.new_vars.of(n);
        let var_old = sides.ix.old_vars.of(o);
        let type_name = var_new.or(var_old).map(|v| v.type_name());
        let ty = var_new.or(var_old).map(|v| &*v.ctype);
        let storage = sides.ix.regions.classify(n, ty);
        let quiet = storage.lifetime();
        let writable = !storage.read_only;
        let is_writable = storage.at_run_time();
        let hot_members = match var_new {
            Some(v) if is_writable => hot.hot_members(&v.ctype, v.layout),
            _ => 0,
        };
        Typed {
            var_old,
            var_new,
            type_name,
            quiet,
            writable,
            is_writable,
            hot_members,
            explicit_alignment: var_new.and_then(|v| sides.new.explicit_alignment(v)),
            cold: crate::evidence::cold::of(n.name, n.section, type_name),
        }
    }
}

/// What `PlacementChange::decision` holds until the change is judged.
const UNDECIDED: verdict::Decision = verdict::Decision {
    verdict: verdict::Verdict::Quiet,
    rule: "",
};

/// Fills the scratch lists with the pair's neighbours on its lines in each build
/// and their keys; returns whether they changed, and whether it gained one.
fn find_tenants<'a, 'd>(
    sides: &Sides<'_, 'a, 'd>,
    p: &Paired<'a, 'd>,
    scratch: &mut Scratch<'a, 'd>,
) -> (bool, bool) {
    let (o, n, ls) = (p.old, p.new, sides.line_size);
    let Scratch {
        near, syms, keys, ..
    } = scratch;
    let [old_syms, new_syms] = syms;
    let [old_keys, new_keys] = keys;
    let (os, ns) = (slot(o.space), slot(n.space));
    tenants(&sides.ix.old_index[os], &mut near[0][os], o, ls, old_syms);
    tenants(&sides.ix.new_index[ns], &mut near[1][ns], n, ls, new_syms);
    tenant_keys(sides.pairing, Side::Old, old_syms, old_keys);
    tenant_keys(sides.pairing, Side::New, new_syms, new_keys);
    let co_changed = old_keys != new_keys;
    let gained = co_changed
        && new_syms.iter().any(|t| {
            old_keys
                .binary_search(&sides.pairing.key_id(Side::New, t))
                .is_err()
        });
    (co_changed, gained)
}

/// The strongest evidence of hotness of the object (`t` its facts): the known list,
/// its declaration, and its write-hot members; without any, that a hot function
/// writes it.
fn object_evidence<'a>(
    sides: &Sides<'_, 'a, '_>,
    (o, n): (&Symbol<'_>, &Symbol<'_>),
    t: &Typed<'_, '_>,
) -> Option<Evidence<'a>> {
    let struct_name = t.var_new.and_then(|v| sides.new.struct_name(v));
    // A declaration counts for storage that can be written and is not cold by
    // convention: a line-aligned ops table in .rodata declares nothing about hotness.
    // `__read_mostly` on either side: data that lost it is at risk in its new place.
    let declared = crate::evidence::declared(
        n.name,
        t.explicit_alignment,
        sides.line_size,
        crate::evidence::Placed {
            hot_area: sides.new.in_percpu_hot_area(n),
            read_mostly: sides.new.in_read_mostly(n) || sides.old.in_read_mostly(o),
        },
    )
    .filter(|_| t.writable && t.cold.is_none());
    let evidence = [
        sides.hotness.object(n.name, struct_name),
        declared.map(Evidence::Declared),
        (t.hot_members > 0).then_some(Evidence::Inferred {
            members: t.hot_members,
        }),
    ]
    .into_iter()
    .fold(None, Evidence::stronger);
    // Lines are judged member by member for objects with evidence of hotness, or that
    // a hot function writes; the rest cannot be flagged, whatever shares their lines.
    match (evidence, t.is_writable && t.cold.is_none()) {
        (None, true) => sharing::hot_writer(sides.hotness, sides.new, n),
        (e, _) => e,
    }
}

/// The object's lines judged member by member in both builds, on `evidence`.
fn judge_lines<'a, 'd>(
    sides: &Sides<'_, 'a, 'd>,
    hot: &mut HotTypes<'_, '_>,
    scratch: &mut Scratch<'a, 'd>,
    p: &Paired<'a, 'd>,
    evidence: Option<Evidence<'a>>,
) -> Box<super::lines::LineSharing<'a>> {
    let (old_side, new_side) = sides.line_sides();
    let mut judge = sharing::Judge {
        hotness: sides.hotness,
        line_size: sides.line_size,
        types: hot,
        written: &mut scratch.written,
        scratch: &mut scratch.lines,
    };
    Box::new(sharing::judge(
        &mut judge,
        &old_side,
        &new_side,
        (p.old, p.new),
        (evidence, evidence),
    ))
}

/// The new neighbours met on the same line (not only the adjacent one), by file and
/// name, each once.
fn written_neighbours<'a>(sharing: Option<&super::lines::LineSharing<'a>>) -> Vec<SymbolName<'a>> {
    match sharing {
        Some(sh) => {
            let mut names: Vec<SymbolName<'a>> = sh
                .new_meetings
                .iter()
                .filter(|m| !m.adjacent)
                .map(|m| m.neighbour)
                .collect();
            names.sort_by(|a, b| (a.file, a.name).cmp(&(b.file, b.name)));
            names.dedup();
            names
        }
        None => Vec::new(),
    }
}

/// What the verdict on change `c` reads, `old` and `new` its placements.
fn object_facts(c: &PlacementChange<'_>, old: &Placement, new: &Placement) -> ObjectFacts {
    let (evidence, sharing) = (c.evidence, c.sharing.as_ref());
    let line_hot = sharing.and_then(|sh| sh.strength());
    // x86's per-CPU hot area packs what the local CPU touches on every entry into as
    // few lines as it can, by design: each CPU's copy is its own, so a neighbour there
    // is no sharing (no other CPU reaches it; 7.x splits pcpu_hot into such objects).
    let hot_area = c.space == crate::model::Space::Percpu
        && matches!(evidence, Some(Evidence::Declared(Declared::PercpuHotArea)));
    let sharing = sharing.filter(|_| !hot_area);
    ObjectFacts {
        hot: evidence.map(|e| e.strength()).max(line_hot),
        cold: c.cold.is_some(),
        boot_only: c.quiet == Some(Class::Boot.label()),
        gained_neighbour: c.sharing_grew,
        meets_written: sharing.and_then(|sh| sh.same_line()),
        meets_adjacent: sharing.is_some_and(|sh| sh.adjacent()),
        hot_now_alone: sharing.is_some_and(|sh| sh.hot_now_alone()),
        meetings_gone: sharing.is_some_and(|sh| sh.gone > 0 && sh.new_meetings.is_empty()),
        more_lines: new.lines > old.lines,
        lost_line_alignment: c.explicit_alignment.is_some_and(|a| a >= c.line_size)
            && old.line_aligned
            && !new.line_aligned,
        hot_member_moved: c.member_lines.iter().any(|m| {
            m.evidence
                .is_some_and(|e| e.strength() >= crate::evidence::Strength::Known)
        }),
        // Starting a line by chance is no improvement; for a hot object it is.
        improved: (c.co_tenants_changed && !c.sharing_grew)
            || (new.line_aligned
                && !old.line_aligned
                && evidence.is_some_and(|e| e.strength() > crate::evidence::Strength::Inferred)),
        line_facts_changed: c.co_tenants_changed
            || old.offset_in_line != new.offset_in_line
            || old.lines != new.lines,
        read_hot: evidence == Some(Evidence::Declared(Declared::ReadMostly)),
    }
}

/// Decides change `c` (`old` and `new` its placements): its verdict and severity.
fn judge(c: &mut PlacementChange<'_>, old: &Placement, new: &Placement) {
    let facts = object_facts(c, old, new);
    c.decision = verdict::judge_object(&facts);
    c.severity = severity_of(c.decision, &facts);
    c.flagged = c.severity.flagged();
}

/// The severity of a data change decided so: a plain data change with more than
/// inferred evidence of hotness is a change to something hot.
fn severity_of(decision: verdict::Decision, facts: &ObjectFacts) -> Severity {
    let severity = Severity::of(decision.verdict);
    if severity == Severity::Data
        && facts
            .hot
            .is_some_and(|s| s > crate::evidence::Strength::Inferred)
    {
        return Severity::HotChanged;
    }
    severity
}

/// For an object whose struct type changed: named members whose line in the
/// instance changed (lines counted from the instance's first line).
fn member_lines<'a>(
    sides: &Sides<'_, 'a, '_>,
    (o, n): (&Symbol<'_>, &Symbol<'_>),
    (vo, vn): (Option<&Variable<'_>>, Option<&Variable<'_>>),
    same: &mut SameLayouts<'a>,
) -> Vec<MemberLines<'a>> {
    let (Some(vo), Some(vn)) = (vo, vn) else {
        return Vec::new();
    };
    let (Some(lo), Some(ln)) = (vo.layout, vn.layout) else {
        return Vec::new();
    };
    let ls = sides.line_size;
    let (so, sn) = (sides.old.struct_by_id(lo), sides.new.struct_by_id(ln));
    let phases = (o.place % ls, n.place % ls);
    // The phase test first: it is cheap, and comparing two layouts walks every member.
    if phases.0 == phases.1
        && *same
            .layouts
            .entry((lo, ln))
            .or_insert_with(|| same.types.layouts(so, sn))
    {
        return Vec::new();
    }
    // The answer depends on the two layouts and the two offsets in the line only, and
    // objects of one type are many.
    same.member_lines
        .entry((lo, ln, phases.0, phases.1))
        .or_insert_with(|| moved_members(so, sn, phases, ls, sides.hotness))
        .clone()
}

/// The named leaf members of `new` (a layout at `phase` in its first line) whose line,
/// counted from that first line, differs from the same-named member's in `old`.
fn moved_members<'a>(
    old: &'a StructLayout<'_>,
    new: &'a StructLayout<'_>,
    (old_phase, new_phase): (u64, u64),
    line_size: u64,
    hotness: &'a Hotness,
) -> Vec<MemberLines<'a>> {
    // (name, offset, line) of every named leaf member: offsets count from the
    // outermost struct's start at every nesting level.
    let lines = |s: &'a StructLayout<'_>, phase: u64| {
        leaves(s).into_iter().filter_map(move |m| {
            Some((
                m.name?,
                m.offset,
                phase.saturating_add(m.offset) / line_size,
            ))
        })
    };
    let old_m: FxHashMap<&str, (u64, u64)> =
        lines(old, old_phase).map(|(n, o, l)| (n, (o, l))).collect();
    let mut out = Vec::new();
    for (name, off, line) in lines(new, new_phase) {
        let before = old_m.get(name);
        if before.map(|b| b.1) != Some(line) {
            out.push(MemberLines {
                name,
                offset: Pair {
                    old: before.map(|b| b.0),
                    new: Some(off),
                },
                line: Pair {
                    old: before.map(|b| b.1),
                    new: Some(line),
                },
                evidence: hotness.member(new.name, name, off),
            });
        }
    }
    out
}

/// The change of a paired function, or `None` when its phase and line count held and
/// it is not `pinned` (asked for by name).
pub fn function_change<'a>(
    p: &Paired<'a, '_>,
    line_size: u64,
    pinned: bool,
    hotness: &'a Hotness,
) -> Option<FunctionChange<'a>> {
    let (o, n) = (p.old, p.new);
    debug_assert!(o.kind == SymbolKind::Function);
    let lines = |s: &Symbol<'_>| place(s.place, s.size, line_size).lines;
    let phase = Pair {
        old: o.place % line_size,
        new: n.place % line_size,
    };
    let line_count = Pair {
        old: lines(o),
        new: lines(n),
    };
    let changed = phase.changed() || line_count.changed();
    if !changed && !pinned {
        return None;
    }
    let evidence = hotness.function(n.name);
    let decision = verdict::judge_function(evidence.map(|e| e.strength()), pinned);
    let flagged = changed && decision.verdict == verdict::Verdict::Flag(super::Category::Text);
    Some(FunctionChange {
        name: SymbolName::of(n),
        address: Pair {
            old: o.place,
            new: n.place,
        },
        size: Pair {
            old: o.size,
            new: n.size,
        },
        delta: p.delta(),
        phase,
        lines: line_count,
        run: None,
        evidence,
        decision,
        severity: match (changed, flagged) {
            (false, _) => Severity::Info,
            (true, true) => Severity::Text,
            (true, false) => Severity::Phase,
        },
        pinned,
        flagged,
    })
}
