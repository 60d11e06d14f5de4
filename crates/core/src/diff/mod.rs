//! Diff: two images in, a `Report` of typed, ranked changes out. Pure: no I/O and no
//! printing; the order of everything in the report is fixed by sorting.

pub mod causes;
pub mod changes;
pub mod groups;
mod hot;
mod judge;
pub mod lines;
mod names;
pub mod pairing;
mod placement;
mod runs;
mod same;
mod sharing;
mod struct_lines;
mod structs;
pub mod verdict;

use globset::GlobSet;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

pub use changes::*;
pub use judge::{Judgement, Known, OldSide, judge, judge_against, judge_knowing};
pub use struct_lines::{Footprint, StructMeeting, StructSharing};
pub use verdict::Category;

use crate::evidence::{Cold, Hotness};
use crate::model::Header;
use crate::model::{Image, Space, SymbolKind};

/// What the caller wants shown in full whether or not it changed, and the evidence
/// of hotness to judge by.
#[derive(Debug, Default, Clone)]
pub struct DiffOptions<'h> {
    /// Symbols to show in full whether or not they changed (`--symbol`, `--hot` names).
    pub pinned_symbols: Option<GlobSet>,
    /// Structs to show in full whether or not they changed (`--struct`).
    pub pinned_structs: Option<GlobSet>,
    /// Categories whose flagged changes make exit 1; `None`: all but `possible`.
    pub fail_on: Option<Vec<Category>>,
    /// Known and measured evidence; `None`: the built-in known list alone.
    pub hotness: Option<&'h Hotness>,
    /// Keep only the changes the default view lists (`PlacementChange::
    /// listed_by_default`; no function by name): for a text, Markdown or HTML report
    /// without `--all`. Every change is still judged and counted. Ignored when symbols
    /// are pinned.
    pub listed_only: bool,
    /// OLD's link model (`LinkMap::build(old)`), when the caller has it: a prediction
    /// diffed against the build it started from, or the candidates of `suggest`, each
    /// diffed against the same OLD. `None`: built by the diff.
    pub old_link: Option<&'h crate::link::LinkMap<'h>>,
}

/// What one judged change adds to its row's counts (the rest of a row's `Counts`
/// comes from the runs and the pairing), and whether it fails the run.
#[derive(Debug, Clone, Copy, Default)]
struct Marks<'a> {
    changed: bool,
    flagged: bool,
    line_offset_changed: bool,
    improvement: bool,
    failing: bool,
    /// The pattern it is counted under when not listed: a type guess or cold storage.
    pattern: Option<Pattern<'a>>,
}

impl<'a> Marks<'a> {
    fn data(c: &PlacementChange<'a>, fails: impl Fn(Severity) -> bool) -> Marks<'a> {
        let at = c.placement();
        let pattern = match (c.severity, c.cold) {
            (Severity::Possible, _) if !c.is_hot() => {
                Some(Pattern::Possible(c.type_name.unwrap_or("?")))
            }
            (_, Some(cold)) if c.decision.verdict == verdict::Verdict::Quiet => {
                Some(Pattern::Cold(cold))
            }
            _ => None,
        };
        Marks {
            changed: c.changed,
            flagged: c.flagged,
            line_offset_changed: at.old.offset_in_line != at.new.offset_in_line,
            improvement: c.severity == Severity::Improvement,
            failing: fails(c.severity),
            pattern: pattern.filter(|_| c.sharing_grew || at.old.lines < at.new.lines),
        }
    }

    fn function(f: &FunctionChange<'_>, fails: impl Fn(Severity) -> bool) -> Marks<'a> {
        Marks {
            changed: f.address.changed() || f.size.changed(),
            flagged: f.flagged,
            line_offset_changed: f.phase.changed(),
            improvement: false,
            failing: f.flagged && fails(f.severity),
            pattern: None,
        }
    }
}

/// What an unlisted change is counted under in the report's last section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Pattern<'a> {
    /// A type guess (the object's C type) that gained a written neighbour.
    Possible(&'a str),
    /// Cold storage that gained neighbours or lines.
    Cold(Cold),
}

/// The row a change is counted in.
#[derive(Debug, Clone, Copy)]
enum Row {
    Data,
    Percpu,
    Functions,
}

impl Row {
    fn of(space: Space) -> Row {
        match space {
            Space::Global => Row::Data,
            Space::Percpu => Row::Percpu,
        }
    }
}

/// The counts one pass over the judged changes takes: each row's, how many changes
/// fail the run, and the patterns of what is not listed.
#[derive(Default)]
struct Tally<'a> {
    data: Counts,
    percpu: Counts,
    functions: Counts,
    failing: usize,
    patterns: FxHashMap<Pattern<'a>, usize>,
}

impl<'a> Tally<'a> {
    fn count(&mut self, row: Row, m: Marks<'a>) {
        let counts = match row {
            Row::Data => &mut self.data,
            Row::Percpu => &mut self.percpu,
            Row::Functions => &mut self.functions,
        };
        counts.changed += usize::from(m.changed);
        counts.flagged += usize::from(m.flagged);
        counts.line_offset_changed += usize::from(m.line_offset_changed);
        counts.improvements += usize::from(m.improvement);
        self.failing += usize::from(m.failing);
        if let Some(p) = m.pattern {
            *self.patterns.entry(p).or_default() += 1;
        }
    }

    fn add(mut self, o: Tally<'a>) -> Tally<'a> {
        let sum = |a: Counts, b: Counts| Counts {
            changed: a.changed + b.changed,
            flagged: a.flagged + b.flagged,
            line_offset_changed: a.line_offset_changed + b.line_offset_changed,
            improvements: a.improvements + b.improvements,
            ..Counts::default()
        };
        for (p, n) in o.patterns {
            *self.patterns.entry(p).or_default() += n;
        }
        Tally {
            data: sum(self.data, o.data),
            percpu: sum(self.percpu, o.percpu),
            functions: sum(self.functions, o.functions),
            failing: self.failing + o.failing,
            patterns: self.patterns,
        }
    }
}

/// The patterns of unlisted changes, largest first: type guesses by C type, cold
/// storage by kind.
fn pattern_counts(patterns: FxHashMap<Pattern<'_>, usize>) -> Vec<PatternCount> {
    let mut out: Vec<PatternCount> = patterns
        .into_iter()
        .map(|(p, count)| match p {
            Pattern::Possible(t) => PatternCount {
                kind: PatternKind::Possible,
                what: t.to_string(),
                count,
            },
            Pattern::Cold(c) => PatternCount {
                kind: PatternKind::Cold,
                what: c.name().to_string(),
                count,
            },
        })
        .collect();
    out.sort_by(|a, b| {
        (a.kind, std::cmp::Reverse(a.count), &a.what).cmp(&(
            b.kind,
            std::cmp::Reverse(b.count),
            &b.what,
        ))
    });
    out
}

/// Runs matching `pick`: (those that change line membership, whole-line runs).
fn run_counts(runs: &[ShiftRun], pick: impl Fn(&ShiftRun) -> bool) -> (usize, usize) {
    let picked = runs.iter().filter(|r| pick(r));
    let whole = picked.clone().filter(|r| r.whole_lines).count();
    (picked.count() - whole, whole)
}

/// What a diff's options ask of the judgement, read once for `diff` and `judge`: the
/// categories that fail, the symbols and structs pinned, and whether only the changes
/// a report lists are built.
struct Asked<'o, 'a> {
    options: &'o DiffOptions<'a>,
    fail_on: Vec<Category>,
    listed_only: bool,
}

impl<'o, 'a> Asked<'o, 'a> {
    fn of(options: &'o DiffOptions<'a>) -> Self {
        Asked {
            options,
            fail_on: options
                .fail_on
                .clone()
                .unwrap_or_else(Category::default_fail_on),
            listed_only: options.listed_only && options.pinned_symbols.is_none(),
        }
    }

    /// A symbol is asked for by its name or by the qualified name the report prints.
    fn pinned_symbol(&self, s: &crate::model::Symbol<'_>) -> bool {
        self.options
            .pinned_symbols
            .as_ref()
            .is_some_and(|g| s.any_name(|n| g.is_match(n)))
    }

    fn pinned_struct(&self, name: &str) -> bool {
        self.options
            .pinned_structs
            .as_ref()
            .is_some_and(|g| g.is_match(name))
    }

    /// A change of this severity fails the run (`--fail-on`).
    fn fails(&self, s: Severity) -> bool {
        s.category().is_some_and(|c| self.fail_on.contains(&c))
    }
}

/// Compares `old` with `new`. Both must use the same line size.
pub fn diff<'a>(old: &'a Image<'_>, new: &'a Image<'_>, options: &DiffOptions<'a>) -> Report<'a> {
    let line_size = new.line_size;
    let hotness: &'a Hotness = options
        .hotness
        .unwrap_or_else(|| crate::evidence::builtin());
    let alignment = |s: &crate::model::Symbol<'_>| new.explicit_alignment(new.variable_for(s)?);
    let asked = Asked::of(options);
    let pinned_sym = |s: &crate::model::Symbol<'_>| asked.pinned_symbol(s);
    let pinned_struct = |name: &str| asked.pinned_struct(name);
    let (listed_only, fails) = (asked.listed_only, |s| asked.fails(s));
    let ((pairing, structs_added_removed), (mut structs, indexes)) =
        pair_and_compare(old, new, line_size, &pinned_struct, hotness);
    let freqs = (&indexes.old_freq, &indexes.new_freq);
    structs::judge_lines(&mut structs, (old, new), freqs, line_size);
    let sides = placement::Sides {
        pairing: &pairing,
        old,
        new,
        line_size,
        hotness,
        ix: indexes,
    };
    // The shift runs beside the judging of every pair (which does not need them: a
    // change learns its run afterwards).
    let ((mut runs, run_of), mut changes) = rayon::join(
        || shift_runs(&sides, options, &alignment),
        || judge_pairs(&sides, listed_only, &pinned_sym, &fails),
    );
    drop(sides);
    let tallied = tally(&mut changes, &pairing, &run_of, &fails);
    let listed = Listed::of(changes);
    let causes = causes::find(&mut runs, [&listed.data, &listed.percpu], new, &structs);
    let pinned_symbols = pinned_symbols(&pairing, &pinned_sym);
    let pinned_structs = pinned_structs(options, new);
    let rows = [tallied.data, tallied.percpu, tallied.functions];
    let summary = summary(&structs, structs_added_removed, &pairing, &runs, rows);
    let flagged = flagged(&summary);
    let failing = tallied.failing + structs.iter().filter(|s| fails(s.severity)).count();
    let quiet_regions = crate::kernel::Regions::of(new)
        .describe()
        .into_iter()
        .map(|r| QuietRegion {
            what: r.class.label(),
            from: r.from,
            start: r.start,
            end: r.end,
        })
        .collect();
    Report {
        old: Header::of(old),
        new: Header::of(new),
        inputs: Vec::new(),
        hot_files: Vec::new(),
        line_size,
        summary,
        structs,
        data: listed.data,
        percpu: listed.percpu,
        functions: listed.functions,
        runs,
        causes,
        pinned_symbols,
        pinned_structs,
        flagged,
        fail_on: asked.fail_on,
        failing,
        quiet_regions,
        patterns: pattern_counts(tallied.patterns),
    }
}

/// The pairing and how many structs were added and removed, beside the struct
/// changes and the lookup indexes: the pairing (and a small task) on one side; struct
/// layouts and the indexes, which do not need it, on the other, split so that
/// whichever thread is free first takes what is left.
#[allow(clippy::type_complexity)]
fn pair_and_compare<'a, 'd>(
    old: &'a Image<'d>,
    new: &'a Image<'d>,
    line_size: u64,
    pinned_struct: &(dyn Fn(&str) -> bool + Sync),
    hotness: &Hotness,
) -> (
    (pairing::Pairing<'a, 'd>, (usize, usize)),
    (Vec<StructChange>, placement::Indexes<'a, 'd>),
) {
    rayon::join(
        || {
            (
                pairing::pair(&old.symbols, &new.symbols),
                structs::added_removed(old, new),
            )
        },
        || {
            rayon::join(
                || structs::changes(old, new, line_size, pinned_struct, hotness),
                || placement::Indexes::new(old, new, hotness),
            )
        },
    )
}

/// The shift runs of both builds and the run each moved symbol belongs to.
fn shift_runs<'d>(
    sides: &placement::Sides<'_, '_, 'd>,
    options: &DiffOptions<'_>,
    alignment: &dyn Fn(&crate::model::Symbol<'d>) -> Option<u64>,
) -> (Vec<ShiftRun>, runs::RunOf) {
    let vars = [&sides.ix.old_vars, &sides.ix.new_vars];
    let runs_sides = runs::Sides {
        images: [sides.old, sides.new],
        vars,
        old_link: options.old_link,
    };
    runs::find(sides.pairing, runs_sides, sides.line_size, alignment)
}

/// What judging one pair finds. Both kinds of change are boxed so that a slot stays
/// two words wide.
enum Judged<'a> {
    /// A data object of the space given.
    Data(Space, Box<PlacementChange<'a>>),
    Function(Box<FunctionChange<'a>>),
    /// A function that moved or changed size, but neither its phase nor its line
    /// count: counted, not listed.
    Moved,
    /// A change the view asked for does not list (`DiffOptions::listed_only`):
    /// counted only, never built into the report.
    Counted(Row, Marks<'a>),
}

/// Judges every pair independently, in parallel; `collect` keeps pair order and, the
/// pairs being indexed, writes one slot per pair into a single vector (a `flatten`
/// first would gather pieces grown by doubling and copy them together).
fn judge_pairs<'a, 'd>(
    sides: &placement::Sides<'_, 'a, 'd>,
    listed_only: bool,
    pinned_sym: &(impl Fn(&crate::model::Symbol<'_>) -> bool + Sync),
    fails: &(impl Fn(Severity) -> bool + Sync),
) -> Vec<Option<Judged<'a>>> {
    let (line_size, hotness) = (sides.line_size, sides.hotness);
    sides
        .pairing
        .pairs
        .par_iter()
        .map_init(
            || {
                (
                    hot::HotTypes::sharing(sides.new, &sides.ix.new_names),
                    placement::SameLayouts::default(),
                    placement::Scratch::default(),
                )
            },
            |(hot, same, scratch), p| {
                let pinned = pinned_sym(p.new);
                if p.old.kind == SymbolKind::Function {
                    match placement::function_change(p, line_size, pinned, hotness) {
                        Some(f) if listed_only && !f.flagged && f.evidence.is_none() => {
                            Some(Judged::Counted(Row::Functions, Marks::function(&f, fails)))
                        }
                        Some(f) => Some(Judged::Function(Box::new(f))),
                        None if p.old.place != p.new.place || p.old.size != p.new.size => {
                            Some(Judged::Moved)
                        }
                        None => None,
                    }
                } else {
                    placement::data_change(sides, p, hot, same, scratch, pinned).map(|c| {
                        if listed_only && !c.listed_by_default() {
                            Judged::Counted(Row::of(c.space), Marks::data(&c, fails))
                        } else {
                            Judged::Data(c.space, Box::new(c))
                        }
                    })
                }
            },
        )
        .collect::<Vec<Option<Judged<'a>>>>()
}

/// Gives each change its run and counts it into its row, in parallel, so that the
/// pass sorting them into lists moves pointers without reading the changes.
fn tally<'a>(
    changes: &mut [Option<Judged<'a>>],
    pairing: &pairing::Pairing<'_, '_>,
    run_of: &runs::RunOf,
    fails: &(impl Fn(Severity) -> bool + Sync),
) -> Tally<'a> {
    changes
        .par_iter_mut()
        .zip(&pairing.pairs)
        .fold(Tally::default, |mut t, (c, p)| {
            match c {
                Some(Judged::Moved) => t.functions.changed += 1,
                Some(Judged::Function(f)) => {
                    f.run = run_of.get(pairing, p.old);
                    t.count(Row::Functions, Marks::function(f, fails));
                }
                Some(Judged::Data(space, d)) => {
                    d.run = run_of.get(pairing, p.old);
                    t.count(Row::of(*space), Marks::data(d, fails));
                }
                Some(Judged::Counted(row, marks)) => t.count(*row, *marks),
                None => {}
            }
            t
        })
        .reduce(Tally::default, Tally::add)
}

/// The changes the report lists, by row, in pair order; boxed as `Report` keeps them.
#[allow(clippy::vec_box)]
struct Listed<'a> {
    data: Vec<Box<PlacementChange<'a>>>,
    percpu: Vec<Box<PlacementChange<'a>>>,
    functions: Vec<Box<FunctionChange<'a>>>,
}

impl<'a> Listed<'a> {
    /// Sorts the listed changes into their rows.
    fn of(changes: Vec<Option<Judged<'a>>>) -> Self {
        let (mut data, mut percpu, mut functions) = (Vec::new(), Vec::new(), Vec::new());
        for c in changes.into_iter().flatten() {
            match c {
                Judged::Moved | Judged::Counted(..) => {}
                Judged::Function(f) => functions.push(f),
                Judged::Data(Space::Percpu, d) => percpu.push(d),
                Judged::Data(Space::Global, d) => data.push(d),
            }
        }
        Listed {
            data,
            percpu,
            functions,
        }
    }
}

/// The qualified names of the paired symbols `pinned` accepts (by their new symbol).
fn pinned_symbols(
    pairing: &pairing::Pairing<'_, '_>,
    pinned: &impl Fn(&crate::model::Symbol<'_>) -> bool,
) -> Vec<String> {
    pairing
        .pairs
        .iter()
        .filter(|p| pinned(p.new))
        .map(|p| p.new.qualified_name())
        .collect()
}

/// The flagged changes of every row of the summary.
fn flagged(summary: &Summary) -> usize {
    summary.structs.flagged
        + summary.data.flagged
        + summary.percpu.flagged
        + summary.functions.flagged
}

/// The names of the new build's structs the options pin.
fn pinned_structs(options: &DiffOptions<'_>, new: &Image<'_>) -> Vec<String> {
    match &options.pinned_structs {
        Some(g) => new
            .structs
            .iter()
            .filter(|s| g.is_match(s.name))
            .map(|s| s.name.to_string())
            .collect(),
        None => Vec::new(),
    }
}

/// The summary's rows: structs (from their changes and how many were added and
/// removed), then data, per-CPU data and functions (`rows`, as tallied) with their
/// runs and added and removed symbols.
fn summary(
    structs: &[StructChange],
    (structs_added, structs_removed): (usize, usize),
    pairing: &pairing::Pairing<'_, '_>,
    runs: &[ShiftRun],
    [data_counts, percpu_counts, function_counts]: [Counts; 3],
) -> Summary {
    // Symbols of one space and kind (functions or data) in a list.
    let count = |list: &[&crate::model::Symbol<'_>], space: Space, functions: bool| {
        list.iter()
            .filter(|s| s.space == space && (s.kind == SymbolKind::Function) == functions)
            .count()
    };
    let count_added = |space, f| count(&pairing.added, space, f);
    let count_removed = |space, f| count(&pairing.removed, space, f);
    // A row's run counts: data runs of its space.
    let runs_of = |counts: Counts, space: Space| {
        let (runs, whole_line_runs) = run_counts(runs, |r| r.space == space && !r.functions);
        Counts {
            runs,
            whole_line_runs,
            ..counts
        }
    };
    Summary {
        structs: Counts {
            changed: structs
                .iter()
                .filter(|s| s.severity != Severity::Info)
                .count(),
            flagged: structs.iter().filter(|s| s.severity.flagged()).count(),
            line_offset_changed: structs
                .iter()
                .filter(|s| s.members.iter().any(|m| m.line.changed()))
                .count(),
            runs: 0,
            whole_line_runs: 0,
            improvements: 0,
            added: structs_added,
            removed: structs_removed,
        },
        data: Counts {
            added: count_added(Space::Global, false),
            removed: count_removed(Space::Global, false),
            ..runs_of(data_counts, Space::Global)
        },
        percpu: Counts {
            added: count_added(Space::Percpu, false),
            removed: count_removed(Space::Percpu, false),
            ..runs_of(percpu_counts, Space::Percpu)
        },
        functions: {
            let (runs, whole_line_runs) = run_counts(runs, |r| r.functions);
            Counts {
                runs,
                whole_line_runs,
                added: count_added(Space::Global, true),
                removed: count_removed(Space::Global, true),
                ..function_counts
            }
        },
    }
}
