//! Shift runs: neighbouring symbols (old address order, one section) that moved by the
//! same delta are one run, reported once with its cause: everything that changed between
//! its previous neighbour and its first symbol, in both builds, summed in bytes.

use std::borrow::Cow;
use std::cell::OnceCell;

use rustc_hash::{FxHashMap, FxHashSet};

use super::changes::{Cause, CauseItem, ItemKind, Pair, Severity, ShiftRun, Side};
use super::pairing::{Paired, Pairing};
use crate::link::{Alignment, LinkMap};
use crate::model::{Image, Space, Symbol, SymbolKind, SymbolVariables};

/// The run each symbol of the old build belongs to, by its index in the old build's
/// symbols (a vector, not a map keyed by names: it is filled and read once per pair).
pub struct RunOf(Vec<u32>);

impl RunOf {
    const NONE: u32 = u32::MAX;

    /// The run of `s`, a symbol of the old build.
    pub fn get(&self, pairing: &Pairing<'_, '_>, s: &Symbol<'_>) -> Option<usize> {
        let r = *self.0.get(pairing.old_index(s))?;
        (r != Self::NONE).then_some(r as usize)
    }
}

/// Both builds as the runs need them: their variables by symbol, found once by the
/// diff, and OLD's link model when the caller had it already.
pub struct Sides<'x, 'd> {
    pub images: [&'x Image<'d>; 2],
    pub vars: [&'x SymbolVariables<'x, 'd>; 2],
    pub old_link: Option<&'x LinkMap<'x>>,
}

/// The runs of every section, and the run each moved symbol belongs to.
/// `alignment(new symbol)` gives the explicit alignment the new build asks of a symbol.
pub fn find<'a, 'd>(
    pairing: &Pairing<'a, 'd>,
    sides: Sides<'_, 'd>,
    line_size: u64,
    alignment: &dyn Fn(&Symbol<'d>) -> Option<u64>,
) -> (Vec<ShiftRun>, RunOf) {
    let images = sides.images;
    let mut runs = Vec::new();
    let mut member_of = RunOf(vec![RunOf::NONE; images[0].symbols.len()]);
    let same_section: Vec<&Paired<'a, 'd>> = pairing
        .pairs
        .iter()
        .filter(|p| p.old.section == p.new.section)
        .collect();
    // Causes read the link model's alignments only in sections where a run moved,
    // and only of symbols of that section: the other sections are not laid out.
    let moved: FxHashSet<(Space, &str)> = same_section
        .iter()
        .filter(|p| p.delta() != 0)
        .map(|p| (p.old.space, p.old.section))
        .collect();
    let keep = |space: Space, section: &str| moved.contains(&(space, section));
    let aligns = |side: Side| -> Cow<'_, [Option<Alignment>]> {
        let image = images[side.index()];
        match (side, sides.old_link, image.stored_alignments()) {
            (Side::Old, Some(link), _) => Cow::Owned(link.alignments(image.symbols.len())),
            (_, _, Some(stored)) => Cow::Borrowed(stored),
            _ => Cow::Owned(LinkMap::alignments_in(
                image,
                sides.vars[side.index()],
                &keep,
            )),
        }
    };
    let (old_aligns, new_aligns) = rayon::join(|| aligns(Side::Old), || aligns(Side::New));
    let aligns = [old_aligns, new_aligns];
    let ctx = Context::new(pairing, images, alignment, &aligns);
    let mut start = 0;
    while start < same_section.len() {
        let section = (
            same_section[start].old.space,
            same_section[start].old.section,
        );
        let mut end = start;
        while end < same_section.len()
            && (same_section[end].old.space, same_section[end].old.section) == section
        {
            end += 1;
        }
        runs_in_section(
            &same_section[start..end],
            &ctx,
            line_size,
            &mut runs,
            pairing,
            &mut member_of,
        );
        start = end;
    }
    (runs, member_of)
}

fn runs_in_section<'a, 'd>(
    list: &[&Paired<'a, 'd>],
    ctx: &Context<'_, 'a, 'd>,
    line_size: u64,
    runs: &mut Vec<ShiftRun>,
    pairing: &Pairing<'a, 'd>,
    member_of: &mut RunOf,
) {
    let mut i = 0;
    while i < list.len() {
        let delta = list[i].delta();
        let mut j = i + 1;
        while j < list.len() && list[j].delta() == delta {
            j += 1;
        }
        if delta != 0 {
            let first = list[i];
            let last = list[j - 1];
            let RunCause {
                cause,
                base,
                previous_delta,
            } = ctx.cause(list, i);
            let whole_lines = delta.unsigned_abs().is_multiple_of(line_size);
            let functions = first.old.kind == SymbolKind::Function;
            let index = runs.len();
            for p in &list[i..j] {
                member_of.0[pairing.old_index(p.old)] = index as u32;
            }
            runs.push(ShiftRun {
                space: first.old.space,
                section: first.old.section.to_string(),
                first: first.old.qualified_name(),
                last: last.old.qualified_name(),
                count: j - i,
                start: Pair {
                    old: first.old.place,
                    new: first.new.place,
                },
                end: Pair {
                    old: last.old.place_end(),
                    new: last.new.place_end(),
                },
                delta,
                base,
                previous_delta,
                whole_lines,
                functions,
                cause,
                severity: match (whole_lines, functions) {
                    (true, _) => Severity::Info,
                    (false, true) => Severity::Phase,
                    (false, false) => Severity::ShiftRun,
                },
                root: None,
            });
        }
        i = j;
    }
}

/// The previous neighbour of a run starting after `before`: of the symbols sharing the
/// last place and delta (aliases), the largest, so a zero-size alias does not hide the
/// size change of the object it names.
fn previous<'p, 'a, 'd>(before: &[&'p Paired<'a, 'd>]) -> Option<&'p Paired<'a, 'd>> {
    let last = *before.last()?;
    before
        .iter()
        .rev()
        .take_while(|p| p.old.place == last.old.place)
        .filter(|p| p.delta() == last.delta())
        .max_by_key(|p| (p.old.size, std::cmp::Reverse(p.old.name)))
        .copied()
}

/// Symbols of `list` (sorted by space, place) in `section` of `space` with place in
/// `(lo, hi)`.
fn between<'a, 'd>(
    list: &[&'a Symbol<'d>],
    space: Space,
    section: &str,
    lo: Option<u64>,
    hi: u64,
) -> impl Iterator<Item = &'a Symbol<'d>> {
    let from = match lo {
        Some(lo) => list.partition_point(|s| (s.space, s.place) <= (space, lo)),
        None => list.partition_point(|s| s.space < space),
    };
    list[from..]
        .iter()
        .take_while(move |s| (s.space, s.place) < (space, hi))
        .filter(move |s| s.section == section)
        .copied()
}

/// The largest power of two dividing `v`, at most 4096 (page alignment).
fn implied_alignment(v: u64) -> u64 {
    if v == 0 {
        4096
    } else {
        (1u64 << v.trailing_zeros().min(12)).min(4096)
    }
}

/// What explains one shift run: its cause, the base of the gap before it (the
/// nearest paired symbol before the run in both builds, its previous neighbour
/// unless symbols were reordered, else the section start) and the base's delta.
struct RunCause {
    cause: Cause,
    base: Pair<u64>,
    previous_delta: i64,
}

/// What the cause computation needs of both builds, indexed once.
struct Context<'x, 'a, 'd> {
    images: [&'x Image<'d>; 2],
    alignment: &'x dyn Fn(&Symbol<'d>) -> Option<u64>,
    /// What the link model of each build says aligned each symbol, by index.
    aligns: &'x [Cow<'x, [Option<Alignment>]>; 2],
    /// Added and removed symbols, plus both sides of pairs that changed section
    /// (they left one section and joined another), each in (space, place) order.
    added: Vec<&'a Symbol<'d>>,
    removed: Vec<&'a Symbol<'d>>,
    /// Both sides of each pair that changed output section, by the address of either
    /// symbol: its section in the old build and in the new.
    changed_section: FxHashMap<usize, (&'d str, &'d str, Pair<u64>)>,
    /// Same-section pairs by (space, section), in new place order: to find the paired
    /// symbols that lie between a run and its base in the new build.
    new_order: FxHashMap<(Space, &'d str), Vec<&'x Paired<'a, 'd>>>,
    /// Each symbol's `qualified_name`, by build and index, spelled when first named.
    names: [Vec<OnceCell<String>>; 2],
    /// `counted`'s tables, by build.
    slots: [std::cell::RefCell<Slots>; 2],
}

impl<'x, 'a, 'd> Context<'x, 'a, 'd> {
    fn new(
        pairing: &'x Pairing<'a, 'd>,
        images: [&'x Image<'d>; 2],
        alignment: &'x dyn Fn(&Symbol<'d>) -> Option<u64>,
        aligns: &'x [Cow<'x, [Option<Alignment>]>; 2],
    ) -> Self {
        let order = |s: &&Symbol<'d>| (s.space, s.place, s.name);
        let mut added = pairing.added.clone();
        let mut removed = pairing.removed.clone();
        let mut changed_section = FxHashMap::default();
        let mut new_order: FxHashMap<(Space, &'d str), Vec<&'x Paired<'a, 'd>>> =
            FxHashMap::default();
        for p in &pairing.pairs {
            if p.old.section == p.new.section {
                new_order
                    .entry((p.new.space, p.new.section))
                    .or_default()
                    .push(p);
            } else {
                removed.push(p.old);
                added.push(p.new);
                for s in [p.old, p.new] {
                    let sizes = Pair {
                        old: p.old.size,
                        new: p.new.size,
                    };
                    changed_section.insert(
                        s as *const Symbol<'d> as usize,
                        (p.old.section, p.new.section, sizes),
                    );
                }
            }
        }
        added.sort_by_key(order);
        removed.sort_by_key(order);
        for v in new_order.values_mut() {
            v.sort_by_key(|p| (p.new.place, p.new.name));
        }
        Context {
            images,
            alignment,
            aligns,
            added,
            removed,
            changed_section,
            new_order,
            slots: Default::default(),
            names: images.map(|i| {
                std::iter::repeat_with(OnceCell::new)
                    .take(i.symbols.len())
                    .collect()
            }),
        }
    }

    /// `s.qualified_name()`, `s` a symbol of build `side`, spelled once.
    fn name(&self, side: Side, s: &Symbol<'d>) -> Cow<'_, str> {
        match self.images[side.index()].index_of(s) {
            Some(i) => {
                Cow::Borrowed(self.names[side.index()][i].get_or_init(|| s.qualified_name()))
            }
            None => Cow::Owned(s.qualified_name()),
        }
    }

    /// `counted(start, list)` for symbols of build `side` (any not of its symbols: the
    /// map).
    fn counted(&self, side: Side, start: u64, list: &[&Symbol<'d>]) -> Counted<'_> {
        let image = self.images[side.index()];
        if list.iter().any(|s| index_in(image, s).is_none()) {
            return Counted::Map(counted(start, list));
        }
        let mut slots = self.slots[side.index()].borrow_mut();
        if slots.of.len() != image.symbols.len() {
            slots.of = vec![(0, 0, 0); image.symbols.len()];
        }
        if slots.round >= u32::MAX - 2 {
            slots.of.fill((0, 0, 0));
            slots.round = 0;
        }
        slots.round += 2;
        let round = slots.round;
        let mut sorted: Vec<(usize, &Symbol<'d>)> = list
            .iter()
            .filter_map(|s| Some((index_in(image, s)?, *s)))
            .collect();
        sorted.sort_by_key(|(_, s)| (s.place, std::cmp::Reverse(s.size), s.name));
        let mut covered = start;
        for &(i, s) in &sorted {
            let (size, padded) = counted_bytes(s, &mut covered);
            slots.of[i] = (round, size, padded);
        }
        // Each symbol once, with what it was last given (as the map keeps it).
        let mut padding = 0;
        for &(i, _) in &sorted {
            let e = &mut slots.of[i];
            if e.0 == round {
                padding += e.2 - e.1;
                e.0 = round + 1;
            }
        }
        Counted::Slots {
            slots,
            image,
            round,
            padding,
        }
    }

    /// The link model's alignment of `s`, a symbol of build `side`.
    fn link_alignment(&self, side: Side, s: &Symbol<'d>) -> Option<Alignment> {
        let i = self.images[side.index()].index_of(s)?;
        self.aligns[side.index()].get(i).copied().flatten()
    }

    /// Where `section` starts in the place space of build `side`.
    fn section_base(&self, side: Side, space: Space, section: &str) -> u64 {
        match space {
            Space::Percpu => 0,
            Space::Global => self.images[side.index()]
                .sections
                .iter()
                .find(|s| s.name == section)
                .map_or(0, |s| s.address),
        }
    }

    /// The run's cause, the base of the gap before it, and the base's delta (see
    /// `RunCause`).
    fn cause(&self, list: &[&Paired<'a, 'd>], i: usize) -> RunCause {
        let gap = self.gap(list, i);
        let previous_delta = gap.base.new.wrapping_sub(gap.base.old) as i64;
        let change = gap.first.delta().wrapping_sub(previous_delta);
        let old_bytes = self.counted(Side::Old, gap.start(Side::Old), &gap.in_old);
        let new_bytes = self.counted(Side::New, gap.start(Side::New), &gap.in_new);
        let mut items = Items::default();
        self.push_resized_base(&gap, &mut items);
        let mut align = self.first_alignment(&gap);
        self.push_pairs_between(&gap, &old_bytes, &new_bytes, &mut items);
        self.push_unpaired_between(&gap, &old_bytes, &new_bytes, &mut items, &mut align);
        self.push_padding(&gap, &old_bytes, &new_bytes, &mut items);
        RunCause {
            cause: explain(&gap, items, change, align),
            base: gap.base,
            previous_delta,
        }
    }

    /// The gap before the run that starts at `list[i]`: its base and what lies
    /// between the base and the run in each build.
    fn gap<'g>(&'g self, list: &'g [&'g Paired<'a, 'd>], i: usize) -> Gap<'g, 'a, 'd> {
        let first = list[i];
        let space = first.old.space;
        let section = first.old.section;
        let j = (i.saturating_sub(REORDER_WINDOW)..i).rev().find(|&j| {
            let p = list[j].new;
            // A zero-size symbol at the run's new start pushes nothing: still before it.
            p.place < first.new.place || (p.size == 0 && p.place == first.new.place)
        });
        let prev = j.and_then(|j| previous(&list[..=j]));
        let base = match prev {
            Some(p) => Pair {
                old: p.old.place,
                new: p.new.place,
            },
            None => Pair {
                old: self.section_base(Side::Old, space, section),
                new: self.section_base(Side::New, space, section),
            },
        };
        // What lies between the base and the first symbol on each side.
        let old_pairs: Vec<&Paired<'a, 'd>> = match j {
            Some(j) => list[j + 1..i].to_vec(),
            None => list[..i].to_vec(),
        };
        let new_pairs: Vec<&Paired<'a, 'd>> = self
            .new_order
            .get(&(space, section))
            .map(|v| {
                let from = match prev {
                    Some(_) => v.partition_point(|p| p.new.place <= base.new),
                    None => 0,
                };
                let to = v.partition_point(|p| p.new.place < first.new.place);
                v[from..to.max(from)].iter().map(|p| &**p).collect()
            })
            .unwrap_or_default();
        let mut gap = Gap {
            first,
            space,
            section,
            prev,
            base,
            // No base although paired symbols precede the run in one build or the
            // other: none of them precedes it in both (the code before it was laid
            // out in another order, as a module's functions often are).
            no_base: prev.is_none() && (i > 0 || !new_pairs.is_empty()),
            in_old: Vec::new(),
            in_new: Vec::new(),
            old_set: old_pairs.iter().map(pair_ptr).collect(),
            reordered: false,
            old_pairs,
            new_pairs,
        };
        gap.in_old = gap
            .old_pairs
            .iter()
            .map(|p| p.old)
            .filter(|s| prev.is_none_or(|p| !std::ptr::eq(*s, p.old)))
            .chain(gap.unpaired(&self.removed, Side::Old))
            .collect();
        gap.in_new = gap
            .new_pairs
            .iter()
            .map(|p| p.new)
            .filter(|s| prev.is_none_or(|p| !std::ptr::eq(*s, p.new)))
            .chain(gap.unpaired(&self.added, Side::New))
            .collect();
        gap.reordered = gap.is_reordered();
        gap
    }

    /// Lists the base's own change of size, when it has one.
    fn push_resized_base<'n>(&'n self, gap: &Gap<'_, 'a, 'd>, items: &mut Items<'n>) {
        if let Some(p) = gap.prev
            && p.old.size != p.new.size
        {
            items.push(item(
                self.name(Side::Old, p.old),
                ItemKind::Resized,
                p.old.size,
                p.new.size,
            ));
        }
    }

    /// The alignment the run's first symbol may have been placed at: its own, or
    /// what its addresses imply, bounded by what the link model says.
    fn first_alignment(&self, gap: &Gap<'_, 'a, 'd>) -> u64 {
        let (first, prev) = (gap.first, gap.prev);
        // The first symbol's own alignment, or what its addresses imply. When it may
        // start its object file's input section (its unit or `STT_FILE` group differs
        // from the previous symbol's, or either is unknown), the linker aligned that
        // section to its most-aligned member: what both addresses allow.
        let implied = implied_alignment(first.old.place | first.new.place);
        let starts_input_section = prev.is_none_or(|p| {
            p.old.unit.is_none()
                || first.old.unit.is_none()
                || p.old.unit != first.old.unit
                || p.old.group != first.old.group
        });
        // The link model knows both the object's alignment and, when it starts its
        // input section, that section's (its most-aligned member's). Unnamed bytes
        // (string literals in .rodata, code without a symbol) and functions aligned
        // beyond the model's 16 are seen only in the addresses: the larger bound wins.
        let addresses = match (self.alignment)(first.new) {
            Some(a) if starts_input_section => a.max(implied),
            Some(a) => a,
            None => implied,
        };
        // No alignment exceeds what the object's new address allows (a linker-script
        // boundary the model sees somewhere in a gap of unnamed bytes is not one).
        match self.link_alignment(Side::New, first.new) {
            Some(l) => l
                .before()
                .min(implied_alignment(first.new.place))
                .max(addresses),
            None => addresses,
        }
    }

    /// Lists the paired symbols between whose bytes in the gap changed: resized, moved
    /// out of it, or moved into it.
    fn push_pairs_between<'n>(
        &'n self,
        gap: &Gap<'_, 'a, 'd>,
        old_bytes: &Counted<'_>,
        new_bytes: &Counted<'_>,
        items: &mut Items<'n>,
    ) {
        for p in &gap.old_pairs {
            let (o, n) = (old_bytes.get(p.old), new_bytes.get(p.new));
            let kind = match n {
                Some(_) => ItemKind::Resized,
                None => ItemKind::MovedOut,
            };
            if o.unwrap_or(0) != n.unwrap_or(0) {
                items.push(item(
                    self.name(Side::Old, p.old),
                    kind,
                    o.unwrap_or(0),
                    n.unwrap_or(0),
                ));
            }
        }
        for p in &gap.new_pairs {
            if gap.old_set.contains(&pair_ptr(p)) {
                continue;
            }
            if let Some(n) = new_bytes.get(p.new).filter(|&n| n > 0) {
                items.push(item(self.name(Side::Old, p.old), ItemKind::MovedIn, 0, n));
            }
        }
    }

    /// Lists the removed and added symbols in the gap (those that changed section
    /// as such), raising `align` to each one's.
    fn push_unpaired_between<'n>(
        &'n self,
        gap: &Gap<'_, 'a, 'd>,
        old_bytes: &Counted<'_>,
        new_bytes: &Counted<'_>,
        items: &mut Items<'n>,
        align: &mut u64,
    ) {
        for (bytes, list, side) in [
            (old_bytes, &self.removed, Side::Old),
            (new_bytes, &self.added, Side::New),
        ] {
            let kind = match side {
                Side::Old => ItemKind::Removed,
                Side::New => ItemKind::Added,
            };
            for s in gap.unpaired(list, side) {
                let Some(size) = bytes.get(s).filter(|&n| n > 0) else {
                    continue;
                };
                let a = match self.link_alignment(side, s) {
                    Some(l) => l.before(),
                    None => (self.alignment)(s).unwrap_or(1),
                };
                *align = (*align).max(a);
                let (o, n) = match side {
                    Side::Old => (size, 0),
                    Side::New => (0, size),
                };
                let mut it = item(self.name(side, s), kind, o, n);
                if let Some(&(from, to, sizes)) =
                    self.changed_section.get(&(s as *const Symbol<'d> as usize))
                {
                    it.size = sizes;
                    it.change = match kind {
                        ItemKind::Removed => ItemKind::SectionOut,
                        _ => ItemKind::SectionIn,
                    };
                    it.sections = Some(Pair {
                        old: from.to_string(),
                        new: to.to_string(),
                    });
                }
                items.push(it);
            }
        }
    }

    /// Lists the padding between the gap's symbols, the `__pfx_` padding and the
    /// first symbol's new alignment, where they changed.
    fn push_padding<'n>(
        &'n self,
        gap: &Gap<'_, 'a, 'd>,
        old_bytes: &Counted<'_>,
        new_bytes: &Counted<'_>,
        items: &mut Items<'n>,
    ) {
        let first = gap.first;
        // Alignment padding between the symbols of the gap (with the `__pfx_` bytes
        // before each function there), measured from their addresses.
        let (pad_old, pad_new) = (old_bytes.padding(), new_bytes.padding());
        if pad_old != pad_new {
            items.push(item(
                "padding between them".to_string(),
                ItemKind::Padding,
                pad_old,
                pad_new,
            ));
        }
        // The run's first function carries `__pfx_` padding the model does not list.
        let prefix = [
            self.images[0].function_prefix,
            self.images[1].function_prefix,
        ];
        if first.old.kind == SymbolKind::Function && prefix[0] != prefix[1] {
            items.push(item(
                format!("__pfx_ padding ({} B per function)", prefix[1]),
                ItemKind::Prefix,
                prefix[0],
                prefix[1],
            ));
        }
        if let Some(a) = (self.alignment)(first.new).filter(|&a| a > 1)
            && first.new.place.is_multiple_of(a)
            && !first.old.place.is_multiple_of(a)
        {
            let mut realigned = item(
                self.name(Side::New, first.new),
                ItemKind::Realigned,
                first.old.size,
                first.new.size,
            );
            realigned.bytes = 0;
            items.push(realigned);
        }
    }
}

/// The gap before a run: its first pair, its base, and what lies between the two in
/// each build.
struct Gap<'g, 'a, 'd> {
    first: &'g Paired<'a, 'd>,
    space: Space,
    section: &'d str,
    /// The base: the nearest pair before the run in both builds; none: the section
    /// start.
    prev: Option<&'g Paired<'a, 'd>>,
    /// The base's place in each build (the section start without one).
    base: Pair<u64>,
    /// No base although paired symbols precede the run in one build or the other.
    no_base: bool,
    /// The pairs between, in old order and in new order.
    old_pairs: Vec<&'g Paired<'a, 'd>>,
    new_pairs: Vec<&'g Paired<'a, 'd>>,
    /// `old_pairs`, by address.
    old_set: FxHashSet<*const Paired<'a, 'd>>,
    /// The symbols between in each build: the pairs' (the base's left out) and the
    /// removed or added ones.
    in_old: Vec<&'g Symbol<'d>>,
    in_new: Vec<&'g Symbol<'d>>,
    /// A sized pair lies between on one side only.
    reordered: bool,
}

impl<'g, 'a, 'd> Gap<'g, 'a, 'd> {
    /// The symbols of `list` (removed or added, of build `side`) between the base and
    /// the run.
    fn unpaired(
        &self,
        list: &'g [&'a Symbol<'d>],
        side: Side,
    ) -> impl Iterator<Item = &'a Symbol<'d>> + use<'g, 'a, 'd> {
        let lo = self.prev.map(|_| *self.base.get(side));
        let hi = match side {
            Side::Old => self.first.old.place,
            Side::New => self.first.new.place,
        };
        between(list, self.space, self.section, lo, hi)
    }

    /// Whether a sized pair lies between on one side only.
    fn is_reordered(&self) -> bool {
        let sized = |p: &&&Paired<'a, 'd>| p.old.size > 0 || p.new.size > 0;
        let new_set: FxHashSet<*const Paired<'a, 'd>> =
            self.new_pairs.iter().map(pair_ptr).collect();
        self.old_pairs
            .iter()
            .filter(sized)
            .any(|p| !new_set.contains(&pair_ptr(p)))
            || self
                .new_pairs
                .iter()
                .filter(sized)
                .any(|p| !self.old_set.contains(&pair_ptr(p)))
    }

    /// Where the gap starts in build `side`: the end of the base, or the section start.
    fn start(&self, side: Side) -> u64 {
        match self.prev {
            Some(p) => {
                let s = match side {
                    Side::Old => p.old,
                    Side::New => p.new,
                };
                s.place.saturating_add(s.size)
            }
            None => *self.base.get(side),
        }
    }
}

/// A pair's address, to tell pairs apart.
fn pair_ptr<'a, 'd>(p: &&Paired<'a, 'd>) -> *const Paired<'a, 'd> {
    *p as *const Paired<'a, 'd>
}

/// The cause the gap's items explain: the change of the run's delta (`change`)
/// less their bytes is padding within what `align` allows, or is unexplained.
fn explain(gap: &Gap<'_, '_, '_>, items: Items<'_>, change: i64, align: u64) -> Cause {
    let (reordered, no_base) = (gap.reordered, gap.no_base);
    // A long gap (a run whose base is far away) keeps the largest items; `bytes`
    // still sums them all.
    let none = items.is_empty();
    let (items, omitted_items, bytes) = items.finish();
    let padding = change.wrapping_sub(bytes);
    // Each symbol in the gap, and the first one, may sit after up to `align - 1`
    // bytes of padding in either build.
    let gap_len = gap.in_old.len().max(gap.in_new.len()) as u64;
    let explained = padding.unsigned_abs() < align.saturating_mul(gap_len + 1);
    let previous = gap.prev.map(|p| p.old.qualified_name());
    match (reordered, none, explained) {
        (_, _, false) if no_base => Cause::Unexplained {
            previous,
            items: Vec::new(),
            omitted_items: 0,
            bytes: 0,
            residual: change,
            no_base,
        },
        (_, _, false) => Cause::Unexplained {
            previous,
            items,
            omitted_items,
            bytes,
            residual: padding,
            no_base,
        },
        (true, _, true) => Cause::Reordered {
            previous,
            items,
            omitted_items,
            bytes,
            padding,
            alignment: align,
        },
        (false, true, true) => Cause::Padding {
            previous,
            bytes: 0,
            padding,
            alignment: align,
        },
        (false, false, true) => Cause::Changes {
            previous,
            items,
            omitted_items,
            bytes,
            padding,
            alignment: align,
        },
    }
}

/// Items a cause lists at most (the largest); the rest are counted in `omitted_items`.
const MAX_ITEMS: usize = 32;

/// A cause's items as they are found: how many, their bytes summed, and the
/// `MAX_ITEMS` largest (largest first, then by name, equal ones in the order they
/// came: what a stable sort of them all would put first), or all of them in order
/// while there are no more. A long gap has tens of thousands of items, and runs far
/// from their base share most of their gap: keeping every item and sorting them all
/// was most of `suggest`'s time on 6.12 -> 7.3, a diff per candidate.
#[derive(Default)]
struct Items<'n> {
    count: usize,
    bytes: i64,
    /// Each with its place in the order found; cut back to the `MAX_ITEMS` largest
    /// whenever it holds twice that many.
    kept: Vec<(usize, Pending<'n>)>,
    /// Set once `kept` was cut: its item at `MAX_ITEMS - 1` is then the last of the
    /// largest so far, and an item that sorts after it can never be listed.
    cut: bool,
}

impl<'n> Items<'n> {
    fn push(&mut self, p: Pending<'n>) {
        self.bytes += p.bytes;
        let item = (self.count, p);
        self.count += 1;
        if self.cut && by_size(&item, &self.kept[MAX_ITEMS - 1]).is_gt() {
            return;
        }
        self.kept.push(item);
        if self.kept.len() >= 2 * MAX_ITEMS {
            largest(&mut self.kept, MAX_ITEMS);
            self.cut = true;
        }
    }

    fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The items listed, how many were left out, and the bytes of all.
    fn finish(mut self) -> (Vec<CauseItem>, usize, i64) {
        let omitted = self.count.saturating_sub(MAX_ITEMS);
        if omitted > 0 {
            largest(&mut self.kept, MAX_ITEMS);
            self.kept.sort_unstable_by(by_size);
        }
        let items = self.kept.into_iter().map(|(_, p)| p.kept()).collect();
        (items, omitted, self.bytes)
    }
}

/// Largest first, then by name, then in the order found.
fn by_size(a: &(usize, Pending<'_>), b: &(usize, Pending<'_>)) -> std::cmp::Ordering {
    b.1.bytes
        .unsigned_abs()
        .cmp(&a.1.bytes.unsigned_abs())
        .then_with(|| a.1.symbol.cmp(&b.1.symbol))
        .then(a.0.cmp(&b.0))
}

/// Cuts `items` to its `n` first by `by_size`, in no particular order.
fn largest(items: &mut Vec<(usize, Pending<'_>)>, n: usize) {
    if n == 0 {
        items.clear();
    } else if items.len() > n {
        items.select_nth_unstable_by(n - 1, by_size);
        items.truncate(n);
    }
}

/// A cause's item before the largest are kept: its name borrowed from the names
/// `Context::name` spelled once per symbol (runs far from their base share most of
/// their gap, and a gap can hold tens of thousands of items).
struct Pending<'n> {
    symbol: Cow<'n, str>,
    change: ItemKind,
    size: Pair<u64>,
    bytes: i64,
    sections: Option<Pair<String>>,
}

impl Pending<'_> {
    fn kept(self) -> CauseItem {
        CauseItem {
            symbol: self.symbol.into_owned(),
            change: self.change,
            size: self.size,
            bytes: self.bytes,
            sections: self.sections,
        }
    }
}

/// How far back (in old order) the base of a reordered run is looked for.
const REORDER_WINDOW: usize = 256;

fn item<'n>(symbol: impl Into<Cow<'n, str>>, change: ItemKind, old: u64, new: u64) -> Pending<'n> {
    Pending {
        symbol: symbol.into(),
        change,
        size: Pair { old, new },
        bytes: new as i64 - old as i64,
        sections: None,
    }
}

/// Bytes each symbol of `list` (one build, any order) adds to the gap that starts at
/// `start` (the end of the run's base): its size, or nothing when it has no size or lies
/// inside a symbol already counted (an alias); and with the padding before it (from the
/// end of what was counted before it). Keyed by the symbol's address in memory.
struct CountedMap(FxHashMap<*const (), (u64, u64)>);

impl CountedMap {
    /// The size it adds.
    fn get(&self, s: &Symbol<'_>) -> Option<u64> {
        self.0
            .get(&(s as *const Symbol<'_> as *const ()))
            .map(|c| c.0)
    }

    /// Alignment padding (and `__pfx_` bytes) between the counted symbols: what they
    /// add with the padding before each, less their sizes.
    fn padding(&self) -> u64 {
        self.0.values().map(|&(size, padded)| padded - size).sum()
    }
}

fn counted<'d>(start: u64, list: &[&Symbol<'d>]) -> CountedMap {
    let mut sorted: Vec<&Symbol<'d>> = list.to_vec();
    sorted.sort_by_key(|s| (s.place, std::cmp::Reverse(s.size), s.name));
    let mut covered = start;
    let mut out = FxHashMap::with_capacity_and_hasher(sorted.len(), Default::default());
    for s in sorted {
        let bytes = counted_bytes(s, &mut covered);
        out.insert(s as *const Symbol<'_> as *const (), bytes);
    }
    CountedMap(out)
}

/// `counted` for symbols of one build, its answers kept by symbol index in that
/// build's reused table (a hash map per run was a tenth of a distant pair's diff).
enum Counted<'c> {
    Map(CountedMap),
    Slots {
        slots: std::cell::RefMut<'c, Slots>,
        image: &'c Image<'c>,
        round: u32,
        padding: u64,
    },
}

/// Per symbol of a build: the `counted` call that last set it (its round, `+ 1`
/// once its padding was summed), its size and its size with the padding before it.
#[derive(Default)]
struct Slots {
    round: u32,
    of: Vec<(u32, u64, u64)>,
}

impl Counted<'_> {
    fn get(&self, s: &Symbol<'_>) -> Option<u64> {
        match self {
            Counted::Map(m) => m.get(s),
            Counted::Slots {
                slots,
                image,
                round,
                ..
            } => {
                let e = slots.of[index_in(image, s)?];
                (e.0 == *round || e.0 == round + 1).then_some(e.1)
            }
        }
    }

    fn padding(&self) -> u64 {
        match self {
            Counted::Map(m) => m.padding(),
            Counted::Slots { padding, .. } => *padding,
        }
    }
}

/// `Image::index_of` for a symbol of another lifetime (the address is all it reads).
fn index_in(image: &Image<'_>, s: &Symbol<'_>) -> Option<usize> {
    let all = image.symbols.as_ptr_range();
    let at = s as *const Symbol<'_>;
    let (start, at) = (all.start as usize, at as usize);
    (at >= start && at < all.end as usize)
        .then(|| (at - start) / std::mem::size_of::<Symbol<'_>>().max(1))
}

/// The bytes `s` adds to a count that has covered up to `covered` (symbols in place
/// order), and with the padding before it: an overlapping symbol adds only its tail,
/// an empty or covered one nothing. Moves `covered` to its end.
fn counted_bytes(s: &Symbol<'_>, covered: &mut u64) -> (u64, u64) {
    let end = s.place.saturating_add(s.size);
    if s.size == 0 || end <= *covered {
        return (0, 0);
    }
    let size = end - (*covered).max(s.place);
    let padded = end - *covered;
    *covered = end;
    (size.min(s.size), padded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &'static str, place: u64, size: u64) -> Symbol<'static> {
        Symbol::test_object(name, place, size)
    }

    #[test]
    fn aliases_and_zero_size_symbols_add_no_bytes() {
        let base = sym("base", 0x100, 0x10);
        let (a, alias, zero, inner, b) = (
            sym("a", 0x110, 8),
            sym("a_alias", 0x110, 8),
            sym("marker", 0x118, 0),
            sym("inside_base", 0x104, 4),
            sym("b", 0x120, 0x20),
        );
        let list = [&alias, &a, &zero, &inner, &b];
        let c = counted(base.place + base.size, &list);
        let got: Vec<u64> = list.iter().map(|s| c.get(s).unwrap()).collect();
        // One of the two aliases counts (the first by name), the marker and the
        // symbol inside `base` add nothing.
        assert_eq!(got, [0, 8, 0, 0, 0x20]);
        // The padding between them: 0 before `a` (0x110, right after base), 8 before
        // `b` (0x118 -> 0x120).
        assert_eq!(c.padding(), 8);
    }

    proptest::proptest! {
        /// For any symbols laid one after another with gaps, what `counted` gives
        /// them (sizes plus the padding before each) covers exactly the span from the
        /// gap's start to the last symbol's end: a cause's bytes plus its residual
        /// padding always account for the whole shift.
        #[test]
        fn sizes_and_padding_cover_the_gap(
            layout in proptest::collection::vec((0u64..64, 0u64..200), 0..40),
            start in 0u64..4096,
        ) {
            let mut place = start;
            let mut syms = Vec::new();
            for (gap, size) in &layout {
                place += gap;
                syms.push(sym("s", place, *size));
                place += size;
            }
            let list: Vec<&Symbol<'_>> = syms.iter().collect();
            let c = counted(start, &list);
            let sizes: u64 = list.iter().filter_map(|s| c.get(s)).sum();
            let last_end = syms
                .iter()
                .filter(|s| s.size > 0)
                .map(|s| s.place + s.size)
                .max()
                .unwrap_or(start);
            proptest::prop_assert_eq!(sizes, syms.iter().map(|s| s.size).sum::<u64>());
            proptest::prop_assert_eq!(sizes + c.padding(), last_end - start);
        }
    }

    #[test]
    fn items_keep_what_a_stable_sort_puts_first() {
        let it = |symbol: String, bytes: i64| CauseItem {
            symbol,
            change: ItemKind::Added,
            size: Pair {
                old: (-bytes).max(0) as u64,
                new: bytes.max(0) as u64,
            },
            bytes,
            sections: None,
        };
        // Ties in size and in name (the same name added and removed), and more items
        // than are kept between two cuts.
        let all: Vec<CauseItem> = (0..150i64)
            .map(|k| {
                it(
                    format!("s{}", k % 7),
                    [8, -8, 16, 1, 4][(k % 5) as usize] * (k % 3 + 1),
                )
            })
            .collect();
        for n in [0, 1, 5, 31, 32, 33, 63, 64, 65, 100, 150] {
            let mut items = Items::default();
            for i in &all[..n] {
                items.push(item(i.symbol.as_str(), i.change, i.size.old, i.size.new));
            }
            assert_eq!(items.is_empty(), n == 0);
            let (kept, omitted, bytes) = items.finish();
            assert_eq!(bytes, all[..n].iter().map(|i| i.bytes).sum::<i64>());
            assert_eq!(omitted, n.saturating_sub(MAX_ITEMS), "n = {n}");
            if n <= MAX_ITEMS {
                assert_eq!(kept, all[..n].to_vec(), "n = {n}: all, in order");
            } else {
                let mut first = all[..n].to_vec();
                first.sort_by(|a, b| {
                    b.bytes
                        .unsigned_abs()
                        .cmp(&a.bytes.unsigned_abs())
                        .then_with(|| a.symbol.cmp(&b.symbol))
                });
                assert_eq!(kept, first[..MAX_ITEMS].to_vec(), "n = {n}");
            }
        }
        // The first four of ten: sizes 16 and 8, names in order, equal ones as found.
        let mut items = Items::default();
        for (name, bytes) in [("b", 8), ("a", -8), ("c", 16), ("a", 8), ("z", 1)] {
            items.push(item(
                name,
                ItemKind::Added,
                (-bytes).max(0) as u64,
                bytes.max(0) as u64,
            ));
        }
        let (kept, omitted, _) = items.finish();
        let got: Vec<(&str, i64)> = kept.iter().map(|i| (i.symbol.as_str(), i.bytes)).collect();
        assert_eq!(omitted, 0);
        assert_eq!(got, [("b", 8), ("a", -8), ("c", 16), ("a", 8), ("z", 1)]);
    }

    #[test]
    fn implied_alignment_is_the_lowest_set_bit_up_to_a_page() {
        assert_eq!(implied_alignment(0xffffffff81000010), 16);
        assert_eq!(implied_alignment(0xffffffff81000040), 64);
        assert_eq!(implied_alignment(0xffffffff81000000), 4096);
        assert_eq!(implied_alignment(0x1208), 8);
        assert_eq!(implied_alignment(0), 4096);
    }
}
