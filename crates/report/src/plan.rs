//! The report planner: decides which changes of a diff are shown, in what order and
//! within which line budget, and returns typed sections. The text, Markdown and HTML
//! renderers only draw a `Plan`; none of them selects, ranks or cuts.

use layout_diff_core::diff::RootCause;
use layout_diff_core::diff::{
    Counts, FunctionChange, MemberChange, MemberChangeKind, PatternCount, PlacementChange, Report,
    Severity, ShiftRun, StructChange,
};
use layout_diff_core::evidence::Strength;

use super::table::{Cell, Table};

/// How much to show.
#[derive(Debug, Clone, Copy, Default)]
pub struct View {
    /// Lines of flagged items before the cut; `None` shows everything.
    pub limit: Option<usize>,
    /// The functions section kept short (its largest run and `KNOWN_FUNCTIONS_COMPACT`
    /// known-hot functions), for a report that must fit a terminal's height.
    pub compact: bool,
    /// The parts with no flag at their least, for a report whose flagged items do not
    /// fit a terminal's height otherwise: the functions section keeps its counts and
    /// its flagged functions (no runs, no known-hot functions that are not flagged), and
    /// what is counted by pattern keeps its totals.
    pub bare: bool,
}

/// How much of one item to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detail {
    /// Asked for by name (`--symbol`, `--struct`, `--hot`): always shown in full.
    pub pinned: bool,
    /// `--all`: every detail.
    pub all: bool,
    /// One short line only (`diff_lines::brief_line`: name, type, shift, flag): a
    /// flagged item the line budget has no room for in full (flagged items get their
    /// lines before anything else, at least one each).
    pub brief: bool,
}

impl Detail {
    /// Every member line rather than a one-line digest.
    pub fn full(self) -> bool {
        self.pinned || self.all
    }
}

/// One item of a section.
#[derive(Debug, Clone)]
pub enum Item<'r> {
    /// A root change with what it moved.
    Cause(&'r RootCause),
    /// A shift run with its cause.
    Run(&'r ShiftRun),
    /// A data or per-CPU object that moved.
    Placement {
        /// The object's change.
        change: &'r PlacementChange<'r>,
        /// How much of it to show.
        detail: Detail,
    },
    /// A struct whose layout changed; `members` in the order to show them (added and
    /// removed first, then those that change line, then the rest).
    Struct {
        /// The struct's change.
        change: &'r StructChange,
        /// Its members, in the order to show them.
        members: Vec<&'r MemberChange>,
        /// How much of it to show.
        detail: Detail,
    },
}

/// Which part of the report a section is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKind {
    /// Root changes, most hot objects moved first.
    Causes,
    /// Hot objects whose lines changed, flagged first.
    Hot,
    /// Structs whose hot members changed line or whose groups changed.
    Structs,
    /// Hot objects that lost neighbours or now start a line.
    Improvements,
    /// With `--all`: every other object whose lines changed.
    Objects,
    /// With `--all`: every data shift run.
    DataRuns,
}

/// A titled list of items, in the order to show them.
#[derive(Debug, Clone)]
pub struct Section<'r> {
    /// Which part of the report it is.
    pub kind: SectionKind,
    /// Its title.
    pub title: &'static str,
    /// Its items, in the order to show them.
    pub items: Vec<Item<'r>>,
}

/// One function shown by name, with the run it moved in (default view only).
#[derive(Debug, Clone)]
pub struct FunctionItem<'r> {
    /// The function's change.
    pub change: &'r FunctionChange<'r>,
    /// The shift run it moved in, if any.
    pub run: Option<&'r ShiftRun>,
}

/// The closing `text` section: function counts, the largest runs, hot functions.
#[derive(Debug, Clone)]
pub struct TextSection<'r> {
    /// The function counts of the summary.
    pub counts: &'r Counts,
    /// The largest function shift runs.
    pub runs: Vec<&'r ShiftRun>,
    /// The hot functions to show by name.
    pub functions: Vec<FunctionItem<'r>>,
}

/// Everything a renderer draws for a diff, decided once.
#[derive(Debug, Clone)]
pub struct Plan<'r> {
    /// The report drawn.
    pub report: &'r Report<'r>,
    /// Nothing changed and nothing was asked for: the report is "no changes".
    pub empty: bool,
    /// Rows of the summary table.
    pub summary: [(&'static str, &'r Counts); 4],
    /// Sections that have at least one item, in the order to show them.
    pub sections: Vec<Section<'r>>,
    /// The closing section on functions.
    pub text: TextSection<'r>,
    /// What is counted rather than listed: type guesses and cold storage, by pattern.
    pub patterns: &'r [PatternCount],
    /// Items left out by the line budget (flagged ones among them: `flagged_cut`).
    pub cut: usize,
    /// Flagged items left out by the line budget: the budget had fewer lines than there
    /// are flagged items. The closing line says how many (`N more flagged: --all`).
    pub flagged_cut: usize,
    /// How much the report shows: the line budget, and whether compact.
    pub view: View,
}

/// Shares of the line budget per section (causes, hot objects, structs,
/// improvements), in percent; what a section leaves unused carries over to the next.
const SHARES: [usize; 4] = [20, 50, 20, 10];

/// Plans the report of `r` for `view`.
pub fn plan<'r>(r: &'r Report<'r>, view: View) -> Plan<'r> {
    let summary = summary_rows(r);
    let nothing = summary.iter().all(|(_, c)| {
        c.changed + c.added + c.removed + c.line_offset_changed + c.runs + c.whole_line_runs == 0
    });
    let all = view.limit.is_none();
    let mut candidates = vec![
        (SectionKind::Causes, cause_items(r, view)),
        (SectionKind::Hot, hot_items(r, view)),
        (SectionKind::Structs, struct_items(r, view)),
        (SectionKind::Improvements, improvement_items(r, view)),
    ];
    if all {
        candidates.push((SectionKind::Objects, other_items(r)));
        candidates.push((SectionKind::DataRuns, run_items(r)));
    }
    let fitted = fit(candidates, view.limit);
    Plan {
        report: r,
        empty: nothing && r.pinned_symbols.is_empty() && r.pinned_structs.is_empty(),
        summary,
        sections: fitted.sections,
        text: text_section(r, view),
        patterns: &r.patterns,
        cut: fitted.cut,
        flagged_cut: fitted.flagged_cut,
        view,
    }
}

/// What the line budget keeps of the candidate sections.
struct Fitted<'r> {
    /// The sections that kept an item, in the usual order.
    sections: Vec<Section<'r>>,
    /// Items left out.
    cut: usize,
    /// Flagged items left out.
    flagged_cut: usize,
}

/// Cuts the candidate sections to `limit` lines of items (`None`: keeps everything).
/// Items asked for by name are always kept and not counted. Flagged items come first:
/// each gets one line (`Detail::brief`) while the budget lasts, in section and
/// rank order, and then its full height, in the same order, where that fits. What is
/// left goes to the other items, section by section by `SHARES`, each section's unused
/// share carried to the next; a section keeps its items in rank order up to the first
/// that does not fit.
fn fit<'r>(candidates: Vec<(SectionKind, Vec<Item<'r>>)>, limit: Option<usize>) -> Fitted<'r> {
    let Some(limit) = limit else {
        let sections = candidates
            .into_iter()
            .filter(|(_, items)| !items.is_empty())
            .map(|(kind, items)| Section {
                kind,
                title: title(kind),
                items,
            })
            .collect();
        return Fitted {
            sections,
            cut: 0,
            flagged_cut: 0,
        };
    };
    // Which items are kept: flagged ones first, then the others by share.
    let mut keep: Vec<Vec<bool>> = candidates
        .iter()
        .map(|(_, items)| items.iter().map(Item::pinned).collect())
        .collect();
    let mut candidates = candidates;
    let flagged: Vec<(usize, usize)> = candidates
        .iter()
        .enumerate()
        .flat_map(|(s, (_, items))| {
            items
                .iter()
                .enumerate()
                .filter(|(_, it)| it.flagged() && !it.pinned())
                .map(move |(i, _)| (s, i))
        })
        .collect();
    let shown = flagged.len().min(limit);
    let mut left = limit - shown;
    for &(s, i) in &flagged[..shown] {
        keep[s][i] = true;
        let item = &mut candidates[s].1[i];
        let extra = item.height() - 1;
        if extra <= left {
            left -= extra;
        } else {
            item.set_brief();
        }
    }
    let mut carry = 0usize;
    for (s, (_, items)) in candidates.iter().enumerate() {
        let mut budget = left * SHARES.get(s).copied().unwrap_or(0) / 100 + carry;
        for (i, item) in items.iter().enumerate() {
            if keep[s][i] || item.flagged() {
                continue;
            }
            let height = item.height();
            if height <= budget {
                budget -= height;
                keep[s][i] = true;
            } else {
                budget = 0;
            }
        }
        carry = budget;
    }
    let mut cut = 0;
    let mut sections = Vec::new();
    for ((kind, items), keep) in candidates.into_iter().zip(keep) {
        cut += keep.iter().filter(|k| !**k).count();
        let items: Vec<Item<'r>> = items
            .into_iter()
            .zip(keep)
            .filter_map(|(item, k)| k.then_some(item))
            .collect();
        if !items.is_empty() {
            sections.push(Section {
                kind,
                title: title(kind),
                items,
            });
        }
    }
    Fitted {
        sections,
        cut,
        flagged_cut: flagged.len() - shown,
    }
}

/// A section's title.
pub fn title(kind: SectionKind) -> &'static str {
    match kind {
        SectionKind::Causes => "root causes (each change once, with what it moved across lines)",
        SectionKind::Hot => "hot objects whose lines changed (flagged first)",
        SectionKind::Structs => {
            "structs: lines shared anew or no longer, hot members, cache-line groups"
        }
        SectionKind::Improvements => "improvements to hot objects",
        SectionKind::Objects => "other objects whose lines changed",
        SectionKind::DataRuns => "data shift runs (largest first)",
    }
}

/// A column of the summary table: its title and the count of a row's `Counts` it shows.
#[derive(Debug, Clone, Copy)]
pub struct SummaryColumn {
    /// The column's title.
    pub title: &'static str,
    /// The count it shows of a row.
    pub count: fn(&Counts) -> usize,
}

/// The summary table's columns after the name, in order; `diff_lines::legend` says
/// what each counts.
pub const SUMMARY_COLUMNS: [SummaryColumn; 7] = [
    SummaryColumn {
        title: "changed",
        count: |c| c.changed,
    },
    SummaryColumn {
        title: "flagged",
        count: |c| c.flagged,
    },
    SummaryColumn {
        title: "moved in line",
        count: |c| c.line_offset_changed,
    },
    SummaryColumn {
        title: "shift runs",
        count: |c| c.runs,
    },
    SummaryColumn {
        title: "whole-line runs",
        count: |c| c.whole_line_runs,
    },
    SummaryColumn {
        title: "added",
        count: |c| c.added,
    },
    SummaryColumn {
        title: "removed",
        count: |c| c.removed,
    },
];

/// The summary table as data, drawn alike by the text, Markdown and HTML reports: an
/// untitled name column, then `SUMMARY_COLUMNS` right-aligned, one row per kind of
/// thing (`summary_rows`).
pub fn summary_table(rows: &[(&str, &Counts)]) -> Table {
    let mut titles = vec![Cell::left("")];
    titles.extend(SUMMARY_COLUMNS.iter().map(|col| Cell::right(col.title)));
    Table {
        titles,
        rows: rows
            .iter()
            .map(|(name, c)| {
                let mut row = vec![Cell::left(name)];
                row.extend(
                    SUMMARY_COLUMNS
                        .iter()
                        .map(|col| Cell::right((col.count)(c))),
                );
                row
            })
            .collect(),
    }
}

impl<'r> Plan<'r> {
    /// This plan's summary table.
    pub fn summary_table(&self) -> Table {
        summary_table(&self.summary)
    }

    /// Flagged items shown by one line only, and flagged items left out: what
    /// a tighter view of the other parts could give their lines back to.
    pub fn flagged_short(&self) -> usize {
        let brief = self
            .sections
            .iter()
            .flat_map(|s| &s.items)
            .filter(|i| i.flagged() && i.brief())
            .count();
        brief + self.flagged_cut
    }

    /// The sections and the functions section in the order the renderers draw them:
    /// every part that holds a flagged item first, so that no part without a flag comes
    /// before one; within each group, the usual order (root causes, hot objects,
    /// structs, functions, improvements, then what `--all` adds).
    pub fn parts(&self) -> Vec<Part<'_, 'r>> {
        let early = |k: SectionKind| {
            matches!(
                k,
                SectionKind::Causes | SectionKind::Hot | SectionKind::Structs
            )
        };
        let mut parts: Vec<Part<'_, 'r>> = self
            .sections
            .iter()
            .filter(|s| early(s.kind))
            .map(Part::Section)
            .collect();
        parts.push(Part::Functions(&self.text));
        parts.extend(
            self.sections
                .iter()
                .filter(|s| !early(s.kind))
                .map(Part::Section),
        );
        // A stable sort: the usual order within the flagged parts and within the rest.
        parts.sort_by_key(|p| !p.flagged());
        parts
    }
}

/// A part of the report as the renderers draw it, in the order of `Plan::parts`.
#[derive(Debug, Clone, Copy)]
pub enum Part<'p, 'r> {
    /// A section of items.
    Section(&'p Section<'r>),
    /// The functions section.
    Functions(&'p TextSection<'r>),
}

impl Part<'_, '_> {
    /// It holds a flagged item (an object, a struct or a function).
    pub fn flagged(&self) -> bool {
        match self {
            Part::Section(s) => s.items.iter().any(Item::flagged),
            Part::Functions(t) => t.functions.iter().any(|f| f.change.flagged),
        }
    }
}

/// The summary table's rows.
pub fn summary_rows<'r>(r: &'r Report<'r>) -> [(&'static str, &'r Counts); 4] {
    let s = &r.summary;
    [
        ("structs", &s.structs),
        ("data objects", &s.data),
        ("per-CPU", &s.percpu),
        ("functions", &s.functions),
    ]
}

fn is_pinned(r: &Report<'_>, name: &layout_diff_core::diff::SymbolName<'_>) -> bool {
    r.pinned_symbols.iter().any(|p| name.is(p))
}

/// Root changes that moved something across lines (every one with --all), most hot
/// objects first.
fn cause_items<'r>(r: &'r Report<'r>, view: View) -> Vec<Item<'r>> {
    let all = view.limit.is_none();
    r.causes
        .iter()
        .filter(|c| all || c.moved > 0)
        .map(Item::Cause)
        .collect()
}

/// Every data and per-CPU change, in one list.
fn objects<'r>(r: &'r Report<'r>) -> impl Iterator<Item = &'r PlacementChange<'r>> {
    r.data.iter().chain(&r.percpu).map(Box::as_ref)
}

/// The rank of a hot object: flagged before not, then stronger evidence, then place.
fn hot_rank(c: &PlacementChange<'_>) -> (Severity, std::cmp::Reverse<Option<Strength>>) {
    (
        c.severity,
        std::cmp::Reverse(c.evidence.map(|e| e.strength())),
    )
}

/// Hot objects whose lines changed for the worse or with no verdict (and pinned ones):
/// flagged first, by severity, then evidence, then place.
fn hot_items<'r>(r: &'r Report<'r>, view: View) -> Vec<Item<'r>> {
    let all = view.limit.is_none();
    let mut list: Vec<&PlacementChange> = objects(r)
        .filter(|c| {
            is_pinned(r, &c.name) || (c.listed_by_default() && c.severity != Severity::Improvement)
        })
        .collect();
    list.sort_by_key(|c| (!is_pinned(r, &c.name), hot_rank(c), c.space, c.place.old));
    placements(r, list, all)
}

/// Hot objects that improved.
fn improvement_items<'r>(r: &'r Report<'r>, view: View) -> Vec<Item<'r>> {
    let all = view.limit.is_none();
    let mut list: Vec<&PlacementChange> = objects(r)
        .filter(|c| !is_pinned(r, &c.name) && c.severity == Severity::Improvement && c.is_hot())
        .collect();
    list.sort_by_key(|c| (hot_rank(c), c.space, c.place.old));
    placements(r, list, all)
}

/// With --all: every object not in the hot or improvement sections.
fn other_items<'r>(r: &'r Report<'r>) -> Vec<Item<'r>> {
    let mut list: Vec<&PlacementChange> = objects(r)
        .filter(|c| {
            let shown = is_pinned(r, &c.name)
                || c.listed_by_default()
                || (c.severity == Severity::Improvement && c.is_hot());
            !shown
        })
        .collect();
    list.sort_by_key(|c| (c.severity, c.space, c.place.old));
    placements(r, list, true)
}

fn placements<'r>(
    r: &'r Report<'r>,
    list: Vec<&'r PlacementChange<'r>>,
    all: bool,
) -> Vec<Item<'r>> {
    list.into_iter()
        .map(|c| Item::Placement {
            change: c,
            detail: Detail {
                pinned: is_pinned(r, &c.name),
                all,
                brief: false,
            },
        })
        .collect()
}

/// Structs whose hot members changed line or whose groups changed (every changed
/// struct with --all, and those asked for); most members changing line first.
fn struct_items<'r>(r: &'r Report<'r>, view: View) -> Vec<Item<'r>> {
    let all = view.limit.is_none();
    let pinned = |n: &str| r.pinned_structs.iter().any(|p| p == n);
    let mut structs: Vec<&StructChange> = r
        .structs
        .iter()
        .filter(|s| {
            all || pinned(&s.name) || s.severity.flagged() || s.severity == Severity::Improvement
        })
        .collect();
    structs.sort_by_key(|s| {
        let moved = s
            .members
            .iter()
            .filter(|m| {
                m.line.changed()
                    || m.kinds.contains(&MemberChangeKind::Added)
                    || m.kinds.contains(&MemberChangeKind::Removed)
            })
            .count();
        (
            !pinned(&s.name),
            s.severity,
            std::cmp::Reverse(moved),
            s.name.clone(),
        )
    });
    structs
        .into_iter()
        .map(|s| {
            let mut members: Vec<&MemberChange> = s.members.iter().collect();
            members.sort_by_key(|m| {
                let k = m.kinds.first().copied();
                (
                    m.evidence.is_none(),
                    !matches!(k, Some(MemberChangeKind::Added | MemberChangeKind::Removed)),
                    !m.line.changed(),
                )
            });
            Item::Struct {
                change: s,
                members,
                detail: Detail {
                    pinned: pinned(&s.name),
                    all,
                    brief: false,
                },
            }
        })
        .collect()
}

/// Every data shift run, largest first (with --all).
fn run_items<'r>(r: &'r Report<'r>) -> Vec<Item<'r>> {
    let mut runs: Vec<&ShiftRun> = r.runs.iter().filter(|x| !x.functions).collect();
    runs.sort_by(|a, b| b.count.cmp(&a.count).then(a.start.old.cmp(&b.start.old)));
    runs.into_iter().map(Item::Run).collect()
}

/// Known-hot functions listed when they only changed phase (default view).
const KNOWN_FUNCTIONS: usize = 6;
/// The same, in a compact view.
const KNOWN_FUNCTIONS_COMPACT: usize = 3;

/// Functions: the two largest runs that change line membership (all with --all),
/// then the hot functions whose start moved in the line and those asked for by name
/// (every changed function with --all).
fn text_section<'r>(r: &'r Report<'r>, view: View) -> TextSection<'r> {
    let all = view.limit.is_none();
    let mut runs: Vec<&ShiftRun> = r
        .runs
        .iter()
        .filter(|x| x.functions && !x.whole_lines)
        .collect();
    runs.sort_by(|a, b| b.count.cmp(&a.count).then(a.start.old.cmp(&b.start.old)));
    if !all {
        runs.truncate(match (view.bare, view.compact) {
            (true, _) => 0,
            (false, true) => 1,
            (false, false) => 2,
        });
    }
    let known_max = match (view.bare, view.compact) {
        (true, _) => 0,
        (false, true) => KNOWN_FUNCTIONS_COMPACT,
        (false, false) => KNOWN_FUNCTIONS,
    };
    let pinned = |c: &FunctionChange<'_>| r.pinned_symbols.iter().any(|p| c.name.is(p));
    // Flagged and asked-for functions with the run they moved in; known-hot ones that
    // only changed phase, one line each, at most `KNOWN_FUNCTIONS` of them.
    let mut functions: Vec<FunctionItem<'r>> = r
        .functions
        .iter()
        .filter(|c| all || c.flagged || c.evidence.is_some() || pinned(c))
        .map(|c| FunctionItem {
            change: c,
            run: c
                .run
                .and_then(|i| r.runs.get(i))
                .filter(|_| !all && (c.flagged || pinned(c))),
        })
        .collect();
    functions.sort_by_key(|f| {
        (
            !(f.change.flagged || pinned(f.change)),
            std::cmp::Reverse(f.change.evidence.map(|e| e.strength())),
            f.change.address.old,
        )
    });
    if !all {
        let mut known = 0;
        functions.retain(|f| {
            let shown = f.change.flagged || pinned(f.change) || known < known_max;
            known += usize::from(!(f.change.flagged || pinned(f.change)));
            shown
        });
    }
    TextSection {
        counts: &r.summary.functions,
        runs,
        functions,
    }
}

impl Item<'_> {
    /// Always shown, whatever the budget.
    pub fn pinned(&self) -> bool {
        match self {
            Item::Cause(_) | Item::Run(_) => false,
            Item::Placement { detail, .. } | Item::Struct { detail, .. } => detail.pinned,
        }
    }

    /// Flagged on evidence: given its lines before any item that is not.
    pub fn flagged(&self) -> bool {
        match self {
            Item::Cause(_) | Item::Run(_) => false,
            Item::Placement { change, .. } => change.flagged,
            Item::Struct { change, .. } => change.severity.flagged(),
        }
    }

    /// Shown by one line only (`Detail::brief`).
    pub fn brief(&self) -> bool {
        match self {
            Item::Cause(_) | Item::Run(_) => false,
            Item::Placement { detail, .. } | Item::Struct { detail, .. } => detail.brief,
        }
    }

    /// Shown by one line only (`Detail::brief`).
    fn set_brief(&mut self) {
        if let Item::Placement { detail, .. } | Item::Struct { detail, .. } = self {
            detail.brief = true;
        }
    }

    /// The name the item is known by (a run: its first symbol).
    pub fn name(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Item::Cause(c) => c.what.as_str().into(),
            Item::Run(r) => r.first.as_str().into(),
            Item::Placement { change, .. } => change.name.to_string().into(),
            Item::Struct { change, .. } => change.name.as_str().into(),
        }
    }

    /// Lines the item takes in the text report: what the budget counts.
    /// (`sharing_height` counts the meeting lines `diff_lines::sharing_lines` draws.)
    pub fn height(&self) -> usize {
        match self {
            Item::Cause(c) => 1 + usize::from(!c.hot_names.is_empty()),
            Item::Run(_) => 1,
            Item::Placement { detail, .. } | Item::Struct { detail, .. } if detail.brief => 1,
            Item::Placement { change, detail } => {
                let tenants = usize::from(change.co_tenants_changed || detail.pinned);
                let members = if detail.full() {
                    change.member_lines.len()
                } else {
                    usize::from(!change.member_lines.is_empty())
                };
                3 + tenants + members + sharing_height(change)
            }
            Item::Struct {
                change,
                members,
                detail,
            } => {
                let body = if !change.layout.is_empty() {
                    2 + change.layout.len() + boundaries(change).len()
                } else if detail.full() {
                    members.len()
                } else {
                    usize::from(!members.is_empty())
                };
                1 + body + change.groups.len()
            }
        }
    }
}

/// For a struct shown side by side: before which entry of `layout` a new line starts,
/// and that line's number (new layout).
pub fn boundaries(s: &StructChange) -> Vec<(usize, u64)> {
    let mut out = Vec::new();
    let mut line = 0;
    for (i, m) in s.layout.iter().enumerate() {
        if let Some(l) = m.line.new
            && l > line
        {
            out.push((i, l));
            line = l;
        }
    }
    out
}

/// How many new meetings of a hot member and a written member an item spells.
pub const MEETINGS_SHOWN: usize = 2;

/// The lines `diff_lines::sharing_lines` draws for a data change: its new meetings (at
/// most `MEETINGS_SHOWN`, and one line for the rest), and for an improvement the line
/// that says which hot members are alone or which meetings ended.
fn sharing_height(c: &layout_diff_core::diff::PlacementChange<'_>) -> usize {
    let Some(sh) = &c.sharing else {
        return 0;
    };
    let n = sh.new_meetings.len();
    let improvement = c.severity == layout_diff_core::diff::changes::Severity::Improvement
        && (sh.hot_now_alone() || sh.gone > 0);
    n.min(MEETINGS_SHOWN) + usize::from(n > MEETINGS_SHOWN) + usize::from(improvement)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff_lines::item_lines;
    use crate::string;
    use layout_diff_core::diff::{DiffOptions, diff};
    use layout_diff_core::input::InputFile;
    use layout_diff_core::load::LoadOptions;

    /// The budget counts what the text prints: every item's height is the number of
    /// lines the text renderer draws for it, in the default view, with --all, and with
    /// everything pinned (which shows structs side by side).
    #[test]
    fn heights_are_the_lines_the_text_draws() {
        let testdata = testdata!();
        let open = |n: &str| InputFile::open(&testdata.join(n)).expect("fixture");
        let (old, new) = (open("old.elf"), open("new.elf"));
        let load = LoadOptions::default();
        let (old, new) = (old.load(&load).unwrap(), new.load(&load).unwrap());
        let everything = layout_diff_core::show::globs(&["*".to_string()]).unwrap();
        let pinned = DiffOptions {
            pinned_symbols: Some(everything.clone()),
            pinned_structs: Some(everything),
            fail_on: None,
            listed_only: false,
            hotness: None,
            old_link: None,
        };
        let mut checked = 0;
        for options in [DiffOptions::default(), pinned] {
            let report = diff(&old, &new, &options);
            for limit in [Some(54), Some(5), None] {
                let p = plan(
                    &report,
                    View {
                        limit,
                        ..View::default()
                    },
                );
                for item in p.sections.iter().flat_map(|s| &s.items) {
                    assert_eq!(item.height(), item_lines(item).len(), "{}", item.name());
                    checked += 1;
                }
            }
        }
        // 3 views of the plain diff and 3 of the pinned one; not a vacuous loop.
        assert!(checked >= 6, "{checked}");
    }

    /// A diff that keeps only what the default view lists renders the same text,
    /// Markdown and HTML, with the same counts and exit status, in every limited view;
    /// it keeps exactly the listable data objects and the functions with evidence.
    #[test]
    fn keeping_only_the_listed_changes_changes_no_limited_view() {
        let testdata = testdata!();
        let open = |n: &str| InputFile::open(&testdata.join(n)).expect("fixture");
        let (old, new) = (open("old.elf"), open("new.elf"));
        let load = LoadOptions::default();
        let (old, new) = (old.load(&load).unwrap(), new.load(&load).unwrap());
        let full = diff(&old, &new, &DiffOptions::default());
        let listed_only = DiffOptions {
            listed_only: true,
            ..DiffOptions::default()
        };
        let listed = diff(&old, &new, &listed_only);
        for limit in [Some(54), Some(10)] {
            let (a, b) = (
                plan(
                    &full,
                    View {
                        limit,
                        ..View::default()
                    },
                ),
                plan(
                    &listed,
                    View {
                        limit,
                        ..View::default()
                    },
                ),
            );
            let text = |p: &Plan<'_>| string(|o| crate::diff_text::render(o, p));
            let markdown = |p: &Plan<'_>| string(|o| crate::diff_markdown::render(o, p));
            let html = |p: &Plan<'_>| string(|o| crate::html::diff(o, p, None, None));
            assert_eq!(text(&a), text(&b));
            assert_eq!(markdown(&a), markdown(&b));
            assert_eq!(html(&a), html(&b));
        }
        assert_eq!(
            serde_json::to_string(&full.summary).unwrap(),
            serde_json::to_string(&listed.summary).unwrap()
        );
        assert_eq!(
            (full.flagged, full.failing),
            (listed.flagged, listed.failing)
        );
        let listable = |r: &Report<'_>| -> Vec<String> {
            r.data
                .iter()
                .chain(&r.percpu)
                .filter(|c| c.listed_by_default())
                .map(|c| c.name.to_string())
                .collect()
        };
        let kept: Vec<String> = listed
            .data
            .iter()
            .chain(&listed.percpu)
            .map(|c| c.name.to_string())
            .collect();
        assert_eq!(kept, listable(&full));
        assert!(kept.len() < full.data.len() + full.percpu.len());
        // Of the functions, only those with evidence (the known-hot futex_hash and
        // scheduler_tick) are kept.
        assert_eq!((full.functions.len(), listed.functions.len()), (6, 2));
        let names: Vec<String> = listed
            .functions
            .iter()
            .map(|f| f.name.to_string())
            .collect();
        assert_eq!(names, ["futex_hash", "scheduler_tick"]);
    }

    /// A budget of 10 lines keeps only what fits: the fixture's root causes get
    /// 10 * 20% = 2 lines, so one two-line cause, and every later item over budget is cut.
    #[test]
    fn a_small_budget_cuts_items_and_counts_them() {
        let testdata = testdata!();
        let open = |n: &str| InputFile::open(&testdata.join(n)).expect("fixture");
        let (old, new) = (open("old.elf"), open("new.elf"));
        let load = LoadOptions::default();
        let (old, new) = (old.load(&load).unwrap(), new.load(&load).unwrap());
        let report = diff(&old, &new, &DiffOptions::default());
        let all = plan(
            &report,
            View {
                limit: None,
                ..View::default()
            },
        );
        let small = plan(
            &report,
            View {
                limit: Some(10),
                ..View::default()
            },
        );
        let count = |p: &Plan<'_>| p.sections.iter().map(|s| s.items.len()).sum::<usize>();
        assert_eq!(all.cut, 0);
        assert_eq!(
            count(&small) + small.cut,
            count(&plan(
                &report,
                View {
                    limit: Some(10_000),
                    ..View::default()
                }
            ))
        );
        assert_eq!(small.sections[0].kind, SectionKind::Causes);
        assert_eq!(small.sections[0].items.len(), 1);
    }

    /// The parts of a plan in the order the renderers draw them, by kind.
    fn part_kinds(p: &Plan<'_>) -> Vec<Option<SectionKind>> {
        p.parts()
            .iter()
            .map(|part| match part {
                Part::Section(s) => Some(s.kind),
                Part::Functions(_) => None,
            })
            .collect()
    }

    /// Flagged items get the line budget before anything else, at least one line each.
    /// The evidence fixture flags 3 data objects (testdata/evidence/FACTS.md): nr_threads
    /// (6 lines in full: place, offsets, neighbours, 2 meetings, evidence), hot_stat (6)
    /// and sysctl_rm_knob (5: one meeting); its other candidates are 4 root causes
    /// (2, 2, 2 and 1 lines) and 2 hot objects not flagged (pidmap_lock 6 lines,
    /// jiffies_64 4).
    #[test]
    fn flagged_items_get_their_lines_first() {
        let testdata = testdata!();
        let open = |n: &str| InputFile::open(&testdata.join(n)).expect("fixture");
        let (old, new) = (open("evidence/old.elf"), open("evidence/new.elf"));
        let load = LoadOptions::default();
        let (old, new) = (old.load(&load).unwrap(), new.load(&load).unwrap());
        let report = diff(&old, &new, &DiffOptions::default());
        assert_eq!(report.flagged, 3);
        type Shown = (Vec<(SectionKind, String, usize)>, usize, usize);
        let shown = |limit: usize| -> Shown {
            let p = plan(
                &report,
                View {
                    limit: Some(limit),
                    ..View::default()
                },
            );
            let items = p
                .sections
                .iter()
                .flat_map(|s| {
                    s.items
                        .iter()
                        .map(|i| (s.kind, i.name().into(), i.height()))
                })
                .collect();
            (items, p.cut, p.flagged_cut)
        };
        let hot = |n: &str, h: usize| (SectionKind::Hot, n.to_string(), h);
        // 2 lines for 3 flagged items: the first two on one line each, one left out and
        // counted as flagged; nothing else.
        assert_eq!(
            shown(2),
            (vec![hot("nr_threads", 1), hot("hot_stat", 1)], 7, 1)
        );
        // 10 lines: 3 first lines, then nr_threads in full (5 more); hot_stat and
        // sysctl_rm_knob need 5 and 4 more of the 2 left. The 2 left give the causes
        // 20% (0 lines) and the other hot objects 50% (1 line): nothing else fits.
        assert_eq!(
            shown(10),
            (
                vec![
                    hot("nr_threads", 6),
                    hot("hot_stat", 1),
                    hot("sysctl_rm_knob", 1)
                ],
                6,
                0
            )
        );
        // The default 54: 17 lines for the flagged items in full; of the 37 left, the
        // causes' 20% (7) holds all 4 causes, and the hot objects' 50% (18) the other two.
        let (items, cut, flagged_cut) = shown(54);
        assert_eq!((items.len(), cut, flagged_cut), (9, 0, 0));
        let causes: Vec<(SectionKind, usize)> = items[..4].iter().map(|i| (i.0, i.2)).collect();
        assert_eq!(
            causes,
            [
                (SectionKind::Causes, 2),
                (SectionKind::Causes, 2),
                (SectionKind::Causes, 2),
                (SectionKind::Causes, 1)
            ]
        );
        assert_eq!(
            items[4..],
            [
                hot("nr_threads", 6),
                hot("hot_stat", 6),
                hot("sysctl_rm_knob", 5),
                hot("pidmap_lock", 6),
                hot("jiffies_64", 4)
            ]
        );
        // The part with a flagged item is drawn first, the causes after it.
        let default = View {
            limit: Some(54),
            ..View::default()
        };
        let p = plan(&report, default);
        assert_eq!(
            part_kinds(&p),
            [Some(SectionKind::Hot), Some(SectionKind::Causes), None]
        );
    }

    /// With nothing flagged, the parts keep the usual order: causes, functions,
    /// improvements (the plain fixture pair, as its text report shows them).
    #[test]
    fn without_a_flag_the_parts_keep_their_order() {
        let testdata = testdata!();
        let open = |n: &str| InputFile::open(&testdata.join(n)).expect("fixture");
        let (old, new) = (open("old.elf"), open("new.elf"));
        let load = LoadOptions::default();
        let (old, new) = (old.load(&load).unwrap(), new.load(&load).unwrap());
        let report = diff(&old, &new, &DiffOptions::default());
        let default = View {
            limit: Some(54),
            ..View::default()
        };
        let p = plan(&report, default);
        assert_eq!(
            part_kinds(&p),
            [
                Some(SectionKind::Causes),
                None,
                Some(SectionKind::Improvements)
            ]
        );
        assert_eq!((p.flagged_cut, p.flagged_short()), (0, 0));
    }
}
