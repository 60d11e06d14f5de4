//! The link model: each output section as the linker built it, the input
//! sections of its compile units in link order, each aligned to its most-aligned
//! member, with the objects inside in the compiler's order at the compiler's
//! alignments. Laying it out again with the same sizes gives back every address of
//! the build; with other sizes or alignments, the addresses a rebuild would give.
//! `whatif` predicts with it; the bytes between objects that no alignment explains
//! are kept as they were (string literals, unnamed data).

pub mod align;
pub mod kallsyms;
pub mod sections;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::model::{Image, Space, Symbol, SymbolKind, SymbolVariables};
use align::{align_up, asked};

/// One object in its input section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// Index in `Image::symbols`.
    pub symbol: usize,
    /// Its size in bytes.
    pub size: u64,
    /// The alignment the compiler asked, as the build bears it out (lowered to what the
    /// address allows when the type said more).
    pub align: u64,
    /// Whether the source asked for the alignment.
    pub explicit: bool,
    /// Bytes before the object that its alignment does not explain, in units the
    /// alignment keeps: its place is `align_up(end of the one before + lead, align)`.
    pub lead: u64,
    /// An alias or an object inside the one before (same place or overlapping): its
    /// distance from that object's place, kept as it is.
    pub inside: Option<u64>,
}

/// One compile unit's input section: a run of objects of one unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input<'d> {
    /// The unit (`kernel/user.c`); `None` when DWARF names none.
    pub origin: Option<&'d str>,
    /// The input section's alignment: the largest of its objects'.
    pub align: u64,
    /// Its objects, in link order.
    pub members: Vec<Placed>,
    /// Its size when known (from an object file): then each member's `lead` is its
    /// offset from the section's start, and what follows starts after `size` bytes.
    pub size: Option<u64>,
    /// A page or larger boundary the linker script puts it on (`. = ALIGN(PAGE_SIZE)`,
    /// `ALIGN(PMD_SIZE)` before entry text): it starts on the first such boundary
    /// after what precedes it. 1 when none.
    pub boundary: u64,
    /// With `size` known: bytes before it that no alignment explains (another unit's
    /// unnamed data), kept as they were.
    pub lead: u64,
    /// When `boundary` is a guess (a page or `PMD_SIZE` boundary somewhere in a gap
    /// of unnamed bytes): the gap's bytes beyond the section's alignment, which an
    /// output section laid elsewhere keeps instead.
    pub guessed: Option<u64>,
}

/// The smallest boundary taken for a linker script's `ALIGN()`: smaller gaps are
/// unnamed bytes or an input section's own alignment.
const SCRIPT_ALIGN: u64 = 4096;
/// The largest (`PMD_SIZE` on x86-64).
const SCRIPT_ALIGN_MAX: u64 = 2 << 20;

/// One output section (or, in the per-CPU space, the per-CPU area).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output<'d> {
    /// Global data or per-CPU.
    pub space: Space,
    /// The output section's name.
    pub section: &'d str,
    /// Place of the section's start (per-CPU: offset from `__per_cpu_start`).
    pub start: u64,
    /// Place of its end in the build.
    pub end: u64,
    /// Its input sections, in link order.
    pub inputs: Vec<Input<'d>>,
}

/// The data sections of one build as the linker laid them.
#[derive(Debug, Clone)]
pub struct LinkMap<'d> {
    /// The output sections, in address order.
    pub outputs: Vec<Output<'d>>,
    /// Objects whose asked alignment the build did not bear out (their address allows
    /// less): a measure of how far the model's alignment rules fit this compiler.
    pub lowered: usize,
    /// Link order of units: a rank per unit, from the order their code appears in.
    pub rank: FxHashMap<&'d str, f64>,
}

/// The object that follows an input section the link generates, and where the
/// unnamed bytes between them end (see `LinkMap::insert_generated`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct After {
    /// The object's place in the build.
    pub place: u64,
    /// Where the bytes before it that no symbol names end (alignment padding after).
    pub data_end: u64,
}

/// Where GCC met an object first among its unit's objects (what a moved object's
/// place among them follows): GCC emits a unit's objects of one section in the
/// reverse of the order it made their symbols, at their definitions or at a
/// declaration that carries a section attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourcePlace {
    /// A line of the unit's file (`ordering_line`).
    pub line: u32,
    /// A header declared it before the unit's own lines: its symbol may have been
    /// made there, before those of every object the unit's lines made.
    pub header: bool,
}

/// Each object's `SourcePlace`, by symbol index.
pub type Lines<'a> = dyn Fn(usize) -> Option<SourcePlace> + 'a;

/// Where GCC met object `s` first (see `SourcePlace`): a per-CPU variable declared
/// before its definition (`DECLARE_PER_CPU`, whose section attribute makes the
/// symbol: 0 in a header) at that declaration; any other object at its definition,
/// since a plain `extern` makes none.
pub fn ordering_line(s: &Symbol<'_>, v: &crate::model::Variable<'_>) -> Option<SourcePlace> {
    let header = v.declared == Some(0);
    match (s.space, v.declared) {
        (Space::Percpu, Some(line)) => Some(SourcePlace { line, header }),
        _ => v.decl_line.map(|line| SourcePlace { line, header }),
    }
}

/// The alignment the model asks of a function (see `model::FUNCTION_ALIGNMENT`).
pub use crate::model::{Alignment, FUNCTION_ALIGNMENT};

/// What to lay out differently: new sizes and alignments by symbol index, and
/// objects moved to another input section (see `LinkMap::move_to_end_region`).
#[derive(Debug, Default, Clone)]
pub struct Edits {
    /// New sizes, by symbol index.
    pub size: FxHashMap<usize, u64>,
    /// New alignments, by symbol index.
    pub align: FxHashMap<usize, u64>,
}

impl<'d> LinkMap<'d> {
    /// The link map of an image's functions and data objects (global and per-CPU),
    /// at the alignments the compiler gives their types (`align::asked`).
    pub fn build(image: &Image<'d>) -> LinkMap<'d> {
        LinkMap::build_from(image, &image.variables_of_symbols())
    }

    /// `build` with the image's `variables_of_symbols` already found (a diff and a
    /// prediction find them once for every use).
    pub fn build_from(image: &Image<'d>, vars: &SymbolVariables<'_, 'd>) -> LinkMap<'d> {
        LinkMap::build_with(image, &|s| asked_of(image, vars, s))
    }

    /// `build_from(image, vars).alignments(image.symbols.len())` for the symbols of
    /// the output sections `keep` accepts (`None` for every other symbol): each
    /// output section is laid out on its own, so the others need not be, nor the
    /// units' link order, which alignments do not read.
    pub fn alignments_in(
        image: &Image<'d>,
        vars: &SymbolVariables<'_, 'd>,
        keep: &(dyn Fn(Space, &str) -> bool + Sync),
    ) -> Vec<Option<Alignment>> {
        let (outputs, _) = outputs(image, &|s| asked_of(image, vars, s), keep);
        alignments_of(&outputs, image.symbols.len())
    }

    /// The link map with the alignment of each object given by `asked`.
    pub fn build_with(
        image: &Image<'d>,
        asked: &(dyn Fn(&Symbol<'d>) -> align::Asked + Sync),
    ) -> LinkMap<'d> {
        let (outputs, lowered) = outputs(image, asked, &|_, _| true);
        LinkMap {
            outputs,
            lowered,
            rank: link_rank(image),
        }
    }

    /// Each object's alignment in the model, by symbol index (see `Alignment`).
    pub fn alignments(&self, symbols: usize) -> Vec<Option<Alignment>> {
        alignments_of(&self.outputs, symbols)
    }

    /// An empty map of places with room for every object of the model: grown by
    /// doubling instead, it was rehashed about seventeen times per layout of a vmlinux.
    pub(crate) fn placements(&self) -> FxHashMap<usize, (u64, u64)> {
        let objects = self
            .outputs
            .iter()
            .flat_map(|o| &o.inputs)
            .map(|i| i.members.len())
            .sum();
        FxHashMap::with_capacity_and_hasher(objects, Default::default())
    }

    /// Places (and sizes) of every object after laying the sections out again with
    /// `edits`, by symbol index, each output section where it starts in the build.
    /// Identity when `edits` is empty.
    pub fn layout(&self, edits: &Edits) -> FxHashMap<usize, (u64, u64)> {
        let mut out = self.placements();
        for o in &self.outputs {
            self.layout_output(o, o.start, edits, &mut out);
        }
        out
    }

    /// Lays out one output section from `start` into `out`; returns the end of its
    /// last object (`start` when it has none), as `Output::end` measures it.
    fn layout_output(
        &self,
        o: &Output<'d>,
        start: u64,
        edits: &Edits,
        out: &mut FxHashMap<usize, (u64, u64)>,
    ) -> u64 {
        let mut end = start;
        let mut anchor = start;
        let mut last = start;
        for input in &o.inputs {
            // An input section is as aligned as its most-aligned object: as built
            // unless an object's alignment is edited, then from its objects again.
            let edited = input
                .members
                .iter()
                .any(|m| edits.align.contains_key(&m.symbol));
            let input_align = if edited {
                input
                    .members
                    .iter()
                    .filter(|m| m.inside.is_none())
                    .map(|m| edits.align.get(&m.symbol).copied().unwrap_or(m.align))
                    .max()
                    .unwrap_or(1)
            } else {
                input.align
            };
            if let Some(total) = input.size {
                // Laid by the compiler already: offsets from the section start.
                let start = align_up(
                    align_up(end, input.boundary).saturating_add(input.lead),
                    input_align,
                );
                for m in &input.members {
                    let size = edits.size.get(&m.symbol).copied().unwrap_or(m.size);
                    let place = start.saturating_add(m.lead);
                    last = last.max(place.saturating_add(size));
                    out.insert(m.symbol, (place, size));
                }
                end = start.saturating_add(total);
                anchor = start;
                continue;
            }
            // Laid elsewhere than the build put it, a guessed boundary is the bytes
            // it stood for.
            let moved_guess = input.guessed.filter(|_| start != o.start);
            for (k, m) in input.members.iter().enumerate() {
                let size = edits.size.get(&m.symbol).copied().unwrap_or(m.size);
                let place = match m.inside {
                    Some(d) => anchor.saturating_add(d),
                    None => {
                        let own = edits.align.get(&m.symbol).copied().unwrap_or(m.align);
                        let a = if k == 0 { input_align } else { own };
                        // A script boundary first, then the bytes after it.
                        let (from, lead) = match (k, moved_guess) {
                            (0, Some(bytes)) => (end, bytes),
                            (0, None) => (align_up(end, input.boundary), m.lead),
                            _ => (end, m.lead),
                        };
                        let p = align_up(from.saturating_add(lead), a);
                        anchor = p;
                        p
                    }
                };
                end = end.max(place.saturating_add(size));
                last = last.max(end);
                out.insert(m.symbol, (place, size));
            }
        }
        last
    }

    /// Moves object `symbol` out of its input section into its unit's input section of
    /// the region that ends the output section (`..shared_aligned` in the per-CPU
    /// area: where `DEFINE_PER_CPU_ALIGNED` puts a variable), with alignment `align`.
    /// The region is the run of input sections at the end whose objects all asked for
    /// `align` or more; the unit's input section there is found, or made at its place
    /// in link order, and the object takes its place there by definition line (see
    /// `move_to_region_from`). Returns false when the object is not in the map.
    pub fn move_to_end_region(&mut self, symbol: usize, align: u64, line: &Lines<'_>) -> bool {
        let Some((oi, ii, mi)) = self.find(symbol) else {
            return false;
        };
        let rank = self.rank.clone();
        let o = &mut self.outputs[oi];
        let (mut m, origin) = take_member(&mut o.inputs, ii, mi);
        let region_start = o
            .inputs
            .iter()
            .rposition(|i| {
                i.members
                    .iter()
                    .any(|m| m.inside.is_none() && !(m.explicit && m.align >= align))
            })
            .map_or(0, |p| p + 1);
        m.align = align;
        m.explicit = true;
        m.lead = 0;
        m.inside = None;
        insert_in_region(o, region_start, origin, m, &rank, line);
        true
    }

    /// Moves object `symbol` to the end of its unit's input section in the region of
    /// its output section that starts at place `from` (x86's `.data..read_mostly`, last
    /// in `.data`: where `__read_mostly` puts a variable), keeping its alignment; the
    /// unit's input section there is found, or made at its place in link order. The
    /// region starts on a boundary of `start_align` (`READ_MOSTLY_DATA(align)` begins
    /// with `. = ALIGN(align)`), which the model keeps as the first input section's.
    /// Among the unit's objects already there it takes its place by definition line
    /// (`line`, by symbol index) in the order they show (gcc emits a unit's objects
    /// of one section last-defined first), or last when they show none.
    /// An object of another output section of its space (`.bss`, for a zero-initialised
    /// object) leaves it for the region's output section.
    /// Returns false when the object is not in the map or already in the region.
    pub fn move_to_region_from(
        &mut self,
        symbol: usize,
        from: u64,
        start_align: u64,
        places: &[u64],
        line: &Lines<'_>,
    ) -> bool {
        let Some((source, ii, mi)) = self.find(symbol) else {
            return false;
        };
        let space = self.outputs[source].space;
        let Some(oi) = self
            .outputs
            .iter()
            .position(|o| o.space == space && (o.start..o.end).contains(&from))
        else {
            return false;
        };
        let rank = self.rank.clone();
        let starts = |i: &Input<'_>| {
            i.members
                .first()
                .and_then(|m| places.get(m.symbol))
                .is_some_and(|&p| p >= from)
        };
        if oi == source && starts(&self.outputs[oi].inputs[ii]) {
            return false;
        }
        // One unit's objects on both sides of `from` are one input section in the map
        // (a unit in a row): its read-mostly part is an input section of its own.
        let (mut ii, mut mi) = (ii, mi);
        let o = &mut self.outputs[oi];
        if let Some((si, k)) = split_at(o, places, from) {
            if oi == source && (si < ii || (si == ii && mi >= k)) {
                if si == ii {
                    mi -= k;
                }
                ii += 1;
            }
            if oi == source && starts(&o.inputs[ii]) {
                return false;
            }
        }
        // Out of its input section (in `.bss`, for a zero-initialised object).
        let (mut m, origin) = take_member(&mut self.outputs[source].inputs, ii, mi);
        let o = &mut self.outputs[oi];
        let region_start = o.inputs.iter().position(starts).unwrap_or(o.inputs.len());
        if let Some(first) = o.inputs.get_mut(region_start) {
            on_boundary(first, start_align, places);
        }
        m.lead = 0;
        m.inside = None;
        let moved = m.symbol;
        insert_in_region(o, region_start, origin, m, &rank, line);
        // A new input section of its own may now come first in the region.
        if let Some(first) = o.inputs.get_mut(region_start)
            && first.members.first().is_some_and(|x| x.symbol == moved)
        {
            first.boundary = first.boundary.max(start_align);
            if let Some(next) = o.inputs.get_mut(region_start + 1) {
                next.boundary = 1;
            }
        }
        true
    }

    /// The output section each object of the map is in, by symbol index, for those
    /// the map holds in another than the build did (`move_to_region_from`).
    pub fn moved_sections(&self, image: &Image<'d>) -> FxHashMap<usize, &'d str> {
        let mut out = FxHashMap::default();
        for o in &self.outputs {
            for m in o.inputs.iter().flat_map(|i| &i.members) {
                if image
                    .symbols
                    .get(m.symbol)
                    .is_some_and(|s| s.section != o.section)
                {
                    out.insert(m.symbol, o.section);
                }
            }
        }
        out
    }

    /// The object `symbol` lies inside (an alias at its address, or a part of it),
    /// when it lies inside one: what a change to its placement has to name.
    pub fn host(&self, symbol: usize) -> Option<usize> {
        let (oi, ii, mi) = self.find(symbol)?;
        let members = &self.outputs[oi].inputs[ii].members;
        members[mi].inside?;
        members[..mi]
            .iter()
            .rev()
            .find(|m| m.inside.is_none())
            .map(|m| m.symbol)
    }

    /// Output, input and member index of an object.
    /// Adds an input section the link generates, with no object of the image (the
    /// kallsyms tables): `members` (symbol indices past the image's) in a row from
    /// `start`, each `align`-aligned, at their place in the global output section
    /// that holds `start`. The input section after it then starts from its end as
    /// `build` derives it (its first object's lead, a script boundary), instead of
    /// from the one before; with `after`, the unnamed bytes before that input section
    /// end where it says, and only the padding after them absorbs growth. Returns
    /// false when no output section holds `start`.
    pub fn insert_generated(
        &mut self,
        image: &Image<'d>,
        start: u64,
        align: u64,
        members: &[(usize, u64)],
        after: Option<After>,
    ) -> bool {
        let Some(o) = self
            .outputs
            .iter_mut()
            .find(|o| o.space == Space::Global && o.start <= start && start < o.end)
        else {
            return false;
        };
        let place_of = |input: &Input<'_>| {
            input
                .members
                .first()
                .and_then(|m| image.symbols.get(m.symbol))
                .map(|s| s.place)
        };
        let at = o
            .inputs
            .iter()
            .position(|i| place_of(i).is_some_and(|p| p >= start))
            .unwrap_or(o.inputs.len());
        let before_end = o.inputs[..at]
            .iter()
            .flat_map(|i| &i.members)
            .filter_map(|m| image.symbols.get(m.symbol))
            .map(Symbol::place_end)
            .max()
            .unwrap_or(o.start);
        let placed: Vec<Placed> = members
            .iter()
            .enumerate()
            .map(|(k, &(symbol, size))| Placed {
                symbol,
                size,
                align,
                explicit: false,
                lead: match k {
                    0 => start.saturating_sub(align_up(before_end, align)),
                    _ => 0,
                },
                inside: None,
            })
            .collect();
        let mut end = start;
        for m in &placed {
            end = align_up(end, align).saturating_add(m.size);
        }
        o.inputs.insert(
            at,
            Input {
                origin: None,
                align,
                members: placed,
                size: None,
                boundary: 1,
                lead: 0,
                guessed: None,
            },
        );
        if let Some(next) = o.inputs.get_mut(at + 1) {
            follow_generated(image, next, end, after);
        }
        true
    }

    fn find(&self, symbol: usize) -> Option<(usize, usize, usize)> {
        for (oi, o) in self.outputs.iter().enumerate() {
            for (ii, i) in o.inputs.iter().enumerate() {
                if let Some(mi) = i.members.iter().position(|m| m.symbol == symbol) {
                    return Some((oi, ii, mi));
                }
            }
        }
        None
    }
}

/// Takes member `mi` out of input section `ii` (gone when it was the last), with the
/// section's unit. A zero-size object at its place (a label: `static struct
/// lock_class_key __key` without lockdep) stays, after what comes before it.
fn take_member<'d>(inputs: &mut Vec<Input<'d>>, ii: usize, mi: usize) -> (Placed, Option<&'d str>) {
    let input = &mut inputs[ii];
    let m = input.members.remove(mi);
    let origin = input.origin;
    for label in input.members[mi..]
        .iter_mut()
        .take_while(|x| x.inside.is_some() && x.size == 0)
    {
        label.inside = None;
        label.align = 1;
        label.lead = 0;
    }
    if input.members.is_empty() {
        inputs.remove(ii);
    } else if mi == 0 {
        input.members[0].inside = None;
    }
    (m, origin)
}

/// Puts `m` in `origin`'s input section among `o.inputs[region_start..]` at its place
/// by definition line (`in_line_order`), or in a new input section of its own at its
/// unit's place in link order there.
fn insert_in_region<'d>(
    o: &mut Output<'d>,
    region_start: usize,
    origin: Option<&'d str>,
    m: Placed,
    rank: &FxHashMap<&'d str, f64>,
    line: &Lines<'_>,
) {
    let align = m.align;
    // The order the unit's objects show: in its input section of the region, else in
    // all of its input sections of the output section (each input section's own).
    let of_unit = |i: &&Input<'_>| i.origin.is_some() && i.origin == origin;
    let here = o.inputs[region_start..].iter().find(of_unit);
    let standing = |i: &Input<'_>| i.members.iter().filter(|m| m.inside.is_none()).count();
    // Two or more of its objects there show their own order (or, running both ways,
    // that a header made some: `in_line_order`); else take the unit's elsewhere.
    let order = match here {
        Some(i) if standing(i) >= 2 => line_order(i.members.iter(), line),
        _ => None,
    }
    .or_else(|| {
        if here.is_some_and(|i| standing(i) >= 2) {
            return None;
        }
        let mut each = o
            .inputs
            .iter()
            .filter(of_unit)
            .filter_map(|i| line_order(i.members.iter(), line));
        let first = each.next()?;
        each.all(|x| x == first).then_some(first)
    });
    if let Some(existing) = o.inputs[region_start..]
        .iter_mut()
        .find(|i| i.origin.is_some() && i.origin == origin)
    {
        existing.align = existing.align.max(align);
        let at = in_line_order(&existing.members, &m, line, order);
        if at == 0 {
            // It now starts the section: what started it keeps its bytes after it.
            if let Some(first) = existing.members.first_mut() {
                first.inside = None;
            }
        }
        existing.members.insert(at, m);
        return;
    }
    let of = |u: Option<&str>| u.and_then(|u| rank.get(u)).copied();
    let at = match of(origin) {
        Some(r) => o.inputs[region_start..]
            .iter()
            .position(|i| of(i.origin).is_some_and(|x| x > r))
            .map_or(o.inputs.len(), |p| region_start + p),
        None => o.inputs.len(),
    };
    o.inputs.insert(
        at,
        Input {
            origin,
            align,
            members: vec![m],
            size: None,
            boundary: 1,
            lead: 0,
            guessed: None,
        },
    );
}

/// Where `m` goes among `members` (one unit's objects of one input section, in
/// address order): by its definition line, in the order the unit's objects show
/// (`order`: lines running down, as gcc emits a unit's objects of one section
/// last-defined first; or up, with `-fno-toplevel-reorder` or `used`), else last.
/// Objects inside another (aliases) keep to the object they are inside.
fn in_line_order(members: &[Placed], m: &Placed, line: &Lines<'_>, order: Option<Order>) -> usize {
    let Some(at) = line(m.symbol) else {
        return members.len();
    };
    let standing = || {
        members
            .iter()
            .enumerate()
            .filter(|(_, x)| x.inside.is_none())
    };
    let Some(order) = order else {
        // The lines run both ways: the objects a header declared were made there,
        // before the unit's own (`extern __read_mostly int scheduler_running;` in
        // `kernel/sched/sched.h`). When the others' lines run down, an object the unit
        // made goes before every object made earlier: those a header made, and those
        // of lower lines.
        let own = || standing().filter(|(_, x)| line(x.symbol).is_some_and(|p| !p.header));
        let lines: Vec<u32> = own()
            .filter_map(|(_, x)| line(x.symbol))
            .map(|p| p.line)
            .collect();
        if at.header || lines.windows(2).any(|w| w[0] <= w[1]) {
            return members.len();
        }
        return standing()
            .find(|(_, x)| line(x.symbol).is_some_and(|p| p.header || p.line < at.line))
            .map_or(members.len(), |(k, _)| k);
    };
    let before = |l: u32| match order {
        Order::Down => at.line > l,
        Order::Up => at.line < l,
    };
    standing()
        .find(|(_, x)| line(x.symbol).is_some_and(|p| before(p.line)))
        .map_or(members.len(), |(k, _)| k)
}

/// Which way definition lines run in address order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Up,
    Down,
}

/// The way the definition lines of `members` (in address order, aliases left out)
/// run, when they all have one and run strictly one way; `None` when fewer than two
/// have lines or they run both ways.
fn line_order<'a>(members: impl Iterator<Item = &'a Placed>, line: &Lines<'_>) -> Option<Order> {
    let lines: Vec<u32> = members
        .filter(|x| x.inside.is_none())
        .map(|x| line(x.symbol).map(|p| p.line))
        .collect::<Option<_>>()?;
    if lines.len() < 2 {
        None
    } else if lines.windows(2).all(|w| w[0] > w[1]) {
        Some(Order::Down)
    } else if lines.windows(2).all(|w| w[0] < w[1]) {
        Some(Order::Up)
    } else {
        None
    }
}

/// The alignment, above `a` and up to 16 bytes (and the array's `size`), that
/// explains the whole gap from `end` to `place` (GCC raises a vectorised array's
/// alignment to its vector size), when one does.
fn raised_alignment(a: u64, size: u64, end: u64, place: u64) -> Option<u64> {
    let most = align::floor_pow2(size.min(16));
    let mut r = a.max(1).saturating_mul(2);
    while r <= most {
        if align_up(end, r) == place {
            return Some(r);
        }
        r = r.saturating_mul(2);
    }
    None
}

/// The largest power of two up to `wanted` that both divides `place` and leaves the
/// object at or after `end` when `end` is rounded up to it.
fn borne_out(wanted: u64, end: u64, place: u64) -> u64 {
    let mut a = wanted.max(1);
    while a > 1 && (!place.is_multiple_of(a) || align_up(end, a) > place) {
        a /= 2;
    }
    a
}

/// The boundary a linker script's `ALIGN()` put an input section on, when its own
/// `align` leaves bytes unexplained before it: the smallest power of two from a page
/// to `PMD_SIZE` whose first boundary after `end` is `place`; or, when a `PMD_SIZE`
/// boundary lies in the gap (entry text after `ALIGN(PMD_SIZE)` starts with code
/// that has no symbol), that; or, when a page or more lies unexplained before it,
/// the largest whose boundary falls in the gap. Else 1.
fn script_boundary(align: u64, end: u64, place: u64, code: bool) -> u64 {
    if align_up(end, align) == place {
        return 1;
    }
    let mut p = SCRIPT_ALIGN;
    while p <= SCRIPT_ALIGN_MAX {
        if p > align && place.is_multiple_of(p) && align_up(end, p) == place {
            return p;
        }
        p *= 2;
    }
    // A `PMD_SIZE` boundary inside the gap, however small: the chance that a gap of
    // unnamed bytes holds one is its size in 2 MiB.
    if align_up(end, SCRIPT_ALIGN_MAX) <= place {
        return SCRIPT_ALIGN_MAX;
    }
    if !code || place.saturating_sub(end) < SCRIPT_ALIGN {
        return 1;
    }
    let mut p = SCRIPT_ALIGN_MAX;
    while p >= SCRIPT_ALIGN {
        if p > align && align_up(end, p) <= place {
            return p;
        }
        p /= 2;
    }
    1
}

/// The place of an output section's start in `space`.
fn section_start(image: &Image<'_>, space: Space, name: &str) -> Option<u64> {
    let s = image.sections.iter().find(|s| s.name == name)?;
    Some(match space {
        Space::Global => s.address,
        Space::Percpu => s.address.wrapping_sub(image.percpu_base.unwrap_or(0)),
    })
}

/// What the model asks of symbol `s` of `image` (`LinkMap::build_from`).
fn asked_of<'d>(image: &Image<'d>, vars: &SymbolVariables<'_, 'd>, s: &Symbol<'d>) -> align::Asked {
    match s.kind {
        // Functions at their unit's alignment: the x86-64 default of 16 (what the
        // addresses bear out where it is less: GCC skips at most 10 bytes to
        // align), 1 in a unit built `-Os` (`Image::function_alignments`).
        SymbolKind::Function => align::Asked {
            alignment: image.function_alignment(s.compile_unit),
            explicit: false,
            raisable: false,
        },
        _ => asked(image, s, vars.of(s)),
    }
}

/// The output sections of `image` that `keep` accepts, laid out as the build placed
/// them (`LinkMap::build_with`), and how many objects the addresses lowered.
fn outputs<'d>(
    image: &Image<'d>,
    asked: &(dyn Fn(&Symbol<'d>) -> align::Asked + Sync),
    keep: &(dyn Fn(Space, &str) -> bool + Sync),
) -> (Vec<Output<'d>>, usize) {
    // x86's READ_MOSTLY_DATA(align) is input sections of their own, after
    // `. = ALIGN(align)`: a unit's objects there start an input section, which
    // begins on a line when it does in the build (so it stays on one when what
    // precedes it grows).
    let read_mostly = image
        .boundaries
        .iter()
        .find(|b| b.0 == crate::model::READ_MOSTLY_START)
        .map(|b| b.1);
    // Each output section is modelled on its own: side by side, in section order
    // (`.text` alone is about half the symbols, the data sections the other half).
    let built: Vec<(Output<'d>, usize)> = by_section(image, keep)
        .into_par_iter()
        .map(|(key, list)| {
            let start = section_start(image, key.0, key.1).unwrap_or(list[0].1.place);
            let start = start.min(list[0].1.place);
            let read_mostly_start = read_mostly.filter(|_| key.0 == Space::Global);
            let (mut inputs, raisable) =
                input_sections(image, asked, &list, start, read_mostly_start);
            let lowered = bear_out(image, &mut inputs, &raisable, start, read_mostly_start);
            let end = list
                .iter()
                .map(|(_, s)| s.place_end())
                .max()
                .unwrap_or(start);
            let output = Output {
                space: key.0,
                section: key.1,
                start,
                end,
                inputs,
            };
            (output, lowered)
        })
        .collect();
    let lowered = built.iter().map(|(_, l)| l).sum();
    (built.into_iter().map(|(o, _)| o).collect(), lowered)
}

/// The objects and functions `keep` accepts, by output section (in order of each
/// section's first symbol), each section's in place order (larger first, then by
/// index), with their indexes.
#[allow(clippy::type_complexity)]
fn by_section<'s, 'd>(
    image: &'s Image<'d>,
    keep: &(dyn Fn(Space, &str) -> bool + Sync),
) -> Vec<((Space, &'d str), Vec<(usize, &'s Symbol<'d>)>)> {
    let objects: Vec<(usize, &Symbol<'d>)> = image
        .symbols
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.kind, SymbolKind::Object | SymbolKind::Function))
        .filter(|(_, s)| keep(s.space, s.section))
        .collect();
    let mut by_section: FxHashMap<(Space, &'d str), Vec<(usize, &Symbol<'d>)>> =
        FxHashMap::default();
    for &(i, s) in &objects {
        by_section
            .entry((s.space, s.section))
            .or_default()
            .push((i, s));
    }
    let mut keys: Vec<(Space, &'d str)> = by_section.keys().copied().collect();
    keys.sort_by_key(|k| {
        let first = by_section[k][0].1;
        (k.0, first.place)
    });
    keys.into_iter()
        .map(|key| {
            let mut list = by_section.remove(&key).unwrap_or_default();
            list.sort_by(|a, b| {
                (a.1.place, std::cmp::Reverse(a.1.size), a.0).cmp(&(
                    b.1.place,
                    std::cmp::Reverse(b.1.size),
                    b.0,
                ))
            });
            (key, list)
        })
        .collect()
}

/// The input sections of one output section's symbols (`list`, in place order, the
/// section starting at `start`): a unit's objects in a row are one. Also the arrays
/// whose alignment the compiler may raise, by symbol index, with their sizes.
fn input_sections<'d>(
    image: &Image<'d>,
    asked: &(dyn Fn(&Symbol<'d>) -> align::Asked + Sync),
    list: &[(usize, &Symbol<'d>)],
    start: u64,
    read_mostly_start: Option<u64>,
) -> (Vec<Input<'d>>, FxHashMap<usize, u64>) {
    let mut inputs: Vec<Input<'d>> = Vec::new();
    let mut raisable: FxHashMap<usize, u64> = FxHashMap::default();
    for &(i, s) in list {
        let a = asked(s);
        if a.raisable {
            raisable.insert(i, s.size);
        }
        // A unit's objects in a row are one input section; an object whose
        // unit DWARF does not name joins the one before it, unless a linker
        // script boundary lies between them.
        let prev_end = inputs
            .last()
            .and_then(|i| i.members.last())
            .map_or(start, |m| image.symbols[m.symbol].place_end());
        let crosses = read_mostly_start.is_some_and(|r| {
            let prev = inputs
                .last()
                .and_then(|i| i.members.last())
                .map_or(start, |m| image.symbols[m.symbol].place);
            prev < r && s.place >= r
        });
        let same_unit = !crosses
            && inputs.last().is_some_and(|last| match s.compile_unit {
                None => script_boundary(1, prev_end, s.place, code(s)) == 1,
                unit => last.origin == unit,
            });
        if !same_unit {
            inputs.push(Input {
                origin: s.compile_unit,
                align: 1,
                members: Vec::new(),
                size: None,
                boundary: 1,
                lead: 0,
                guessed: None,
            });
        }
        let input = inputs.last_mut().expect("pushed");
        input.members.push(Placed {
            symbol: i,
            size: s.size,
            align: a.alignment,
            explicit: a.explicit,
            lead: 0,
            inside: None,
        });
    }
    (inputs, raisable)
}

/// Gives the input sections the leads and the alignments the addresses bear out, in
/// one walk from `start`; returns how many alignments that lowered.
fn bear_out(
    image: &Image<'_>,
    inputs: &mut [Input<'_>],
    raisable: &FxHashMap<usize, u64>,
    start: u64,
    read_mostly_start: Option<u64>,
) -> usize {
    let mut lowered = 0;
    let mut end = start;
    let mut anchor = start;
    let mut read_mostly = read_mostly_start;
    for input in inputs {
        input.align = input.members.iter().map(|m| m.align).max().unwrap_or(1);
        for (k, m) in input.members.iter_mut().enumerate() {
            let place = image.symbols[m.symbol].place;
            if place < end {
                m.inside = Some(place - anchor);
                m.align = 1;
                m.lead = 0;
                end = end.max(place.saturating_add(m.size));
                continue;
            }
            let wanted = if k == 0 { input.align } else { m.align };
            let a = borne_out(wanted, end, place);
            if a < wanted {
                lowered += 1;
            }
            if k == 0 {
                input.align = a;
                let first = &image.symbols[m.symbol];
                input.boundary = script_boundary(a, end, place, code(first));
                if let Some(from) = read_mostly
                    && place >= from
                {
                    read_mostly = None;
                    if place.is_multiple_of(image.line_size) && end < place {
                        input.boundary = input.boundary.max(image.line_size);
                    }
                }
                if let Some(gap) = guessed_gap(input.boundary, a, end, place) {
                    input.guessed = Some(gap);
                }
            }
            m.align = if k == 0 { m.align.min(a) } else { a };
            let from = if k == 0 {
                align_up(end, input.boundary)
            } else {
                end
            };
            m.lead = place - align_up(from, a);
            // A vectorised array: the gap is its raised alignment.
            if let Some(&size) = raisable.get(&m.symbol).filter(|_| k > 0 && m.lead > 0)
                && let Some(raised) = raised_alignment(a, size, end, place)
            {
                m.align = raised;
                m.lead = 0;
            }
            anchor = place;
            end = place.saturating_add(m.size);
        }
    }
    lowered
}

/// When an input section aligned to `a` that starts at `place` after `end` does not
/// start on the first `boundary` after `end`, its boundary is a guess (one inside a
/// gap of unnamed bytes): the gap's bytes beyond the section's alignment.
fn guessed_gap(boundary: u64, a: u64, end: u64, place: u64) -> Option<u64> {
    (align_up(end, boundary) != place).then(|| place - align_up(end, a))
}

/// Gives `next`, the input section after generated tables that end at `end`, the
/// boundary and lead its place in the build implies (`after`: the object after the
/// tables, and where the bytes before it end), when it starts past `end`.
fn follow_generated(image: &Image<'_>, next: &mut Input<'_>, end: u64, after: Option<After>) {
    let Some(first) = next
        .members
        .first()
        .and_then(|m| image.symbols.get(m.symbol))
        .filter(|first| first.place >= end)
    else {
        return;
    };
    // Where the input section starts: its first object, less that object's
    // offset when the compiler laid the section (a recompiled object's).
    let offset = match next.size {
        Some(_) => next.members[0].lead,
        None => 0,
    };
    let (a, place) = (next.align, first.place.saturating_sub(offset));
    next.boundary = script_boundary(a, end, place, code(first));
    next.guessed = guessed_gap(next.boundary, a, end, place);
    let data_end = after
        .filter(|x| x.place == place && (end..=place).contains(&x.data_end))
        .filter(|_| next.boundary == 1)
        .map(|x| x.data_end);
    let bytes = match data_end {
        Some(data_end) => data_end - end,
        None => place - align_up(align_up(end, next.boundary), a),
    };
    if data_end.is_some() {
        next.guessed = Some(bytes);
    }
    match next.size {
        Some(_) => next.lead = bytes,
        None => next.members[0].lead = bytes,
    }
}

/// Splits the input section of `o` that holds objects on both sides of `from` (one
/// unit's objects in a row are one input section in the map): its part from `from` on
/// becomes an input section of its own, after it. Returns the index of the section
/// split and of the first member moved out of it.
fn split_at(o: &mut Output<'_>, places: &[u64], from: u64) -> Option<(usize, usize)> {
    let (si, k) = o.inputs.iter().enumerate().find_map(|(si, i)| {
        i.members
            .iter()
            .position(|m| m.inside.is_none() && places.get(m.symbol).is_some_and(|&p| p >= from))
            .filter(|&k| k > 0)
            .map(|k| (si, k))
    })?;
    let tail = o.inputs[si].members.split_off(k);
    let mut split = o.inputs[si].clone();
    split.members = tail;
    split.boundary = 1;
    split.align = split.members.iter().map(|m| m.align).max().unwrap_or(1);
    o.inputs[si].align = o.inputs[si]
        .members
        .iter()
        .map(|m| m.align)
        .max()
        .unwrap_or(1);
    o.inputs.insert(si + 1, split);
    Some((si, k))
}

/// Puts input section `i` on the script's boundary `start_align`, in place of the
/// bytes it explained (its first object's lead, when that object is on it).
fn on_boundary(i: &mut Input<'_>, start_align: u64, places: &[u64]) {
    i.boundary = i.boundary.max(start_align);
    if let Some(first) = i.members.first_mut()
        && places
            .get(first.symbol)
            .is_some_and(|p| p % start_align == 0)
    {
        first.lead = 0;
    }
}

/// Each object's alignment in `outputs`, by symbol index (see `Alignment`).
fn alignments_of(outputs: &[Output<'_>], symbols: usize) -> Vec<Option<Alignment>> {
    let mut out = vec![None; symbols];
    for input in outputs.iter().flat_map(|o| &o.inputs) {
        for (k, m) in input.members.iter().enumerate() {
            if let Some(slot) = out.get_mut(m.symbol) {
                *slot = Some(Alignment {
                    own: m.align,
                    explicit: m.explicit,
                    input: (k == 0).then_some(input.align.max(input.boundary)),
                });
            }
        }
    }
    out
}

/// A rank per unit in link order: the order units' code first appears in (the
/// linker lays every output section's input sections in the same order of object
/// files); a unit with data only is ranked just after the unit before it in the
/// first section it appears in.
fn link_rank<'d>(image: &Image<'d>) -> FxHashMap<&'d str, f64> {
    let mut rank: FxHashMap<&'d str, f64> = FxHashMap::default();
    let mut next = 0.0;
    for s in image
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Function && s.section == ".text")
    {
        if let Some(u) = s.compile_unit
            && !rank.contains_key(u)
        {
            rank.insert(u, next);
            next += 1.0;
        }
    }
    let mut before = -1.0;
    let mut step = 0.0;
    for s in image
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Object)
    {
        let Some(u) = s.compile_unit else { continue };
        match rank.get(u) {
            Some(&r) => {
                before = r;
                step = 0.0;
            }
            None => {
                step += 1e-4;
                rank.insert(u, before + step);
            }
        }
    }
    rank
}

#[cfg(test)]
mod tests;

/// Whether `s` is code: a gap of unnamed bytes before code may hide a linker
/// script's boundary (entry text after `ALIGN(PMD_SIZE)` starts with code that has no
/// symbol); one before data is data (merged strings, unnamed constants).
fn code(s: &Symbol<'_>) -> bool {
    s.kind == SymbolKind::Function
}
