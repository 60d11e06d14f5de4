//! The report planner: decides which changes of a diff are shown, in what order and
//! within which line budget, and returns typed sections. The text, Markdown and HTML
//! renderers only draw a `Plan`; none of them selects, ranks or cuts.

use crate::diff::{
    Counts, FunctionChange, MemberChange, MemberChangeKind, PlacementChange, Report, Severity,
    ShiftRun, StructChange,
};
use crate::model::Space;

/// How much to show.
#[derive(Debug, Clone, Copy)]
pub struct View {
    /// Lines of flagged items before the cut; `None` shows everything.
    pub limit: Option<usize>,
}

/// How much of one item to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detail {
    /// Asked for by name (`--symbol`, `--struct`, `--hot`): always shown in full.
    pub pinned: bool,
    /// `--all`: every detail.
    pub all: bool,
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
    /// A shift run with its cause.
    Run(&'r ShiftRun),
    /// A data or per-CPU object that moved.
    Placement {
        change: &'r PlacementChange<'r>,
        detail: Detail,
    },
    /// A struct whose layout changed; `members` in the order to show them (added and
    /// removed first, then those that change line, then the rest).
    Struct {
        change: &'r StructChange,
        members: Vec<&'r MemberChange>,
        detail: Detail,
    },
}

/// Which part of the report a section is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKind {
    Percpu,
    Data,
    Structs,
    DataRuns,
}

/// A titled list of items, in the order to show them.
#[derive(Debug, Clone)]
pub struct Section<'r> {
    pub kind: SectionKind,
    pub title: &'static str,
    pub items: Vec<Item<'r>>,
}

/// One function shown by name, with the run it moved in (default view only).
#[derive(Debug, Clone)]
pub struct FunctionItem<'r> {
    pub change: &'r FunctionChange<'r>,
    pub run: Option<&'r ShiftRun>,
}

/// The closing `text` section: function counts, the largest runs, named functions.
#[derive(Debug, Clone)]
pub struct TextSection<'r> {
    pub counts: &'r Counts,
    pub runs: Vec<&'r ShiftRun>,
    pub functions: Vec<FunctionItem<'r>>,
}

/// Everything a renderer draws for a diff, decided once.
#[derive(Debug, Clone)]
pub struct Plan<'r> {
    pub report: &'r Report<'r>,
    /// Nothing changed and nothing was asked for: the report is "no changes".
    pub empty: bool,
    /// Rows of the summary table.
    pub summary: [(&'static str, &'r Counts); 4],
    /// Sections that have at least one item, in severity order.
    pub sections: Vec<Section<'r>>,
    pub text: TextSection<'r>,
    /// Items left out by the line budget.
    pub cut: usize,
    pub view: View,
}

/// Shares of the line budget per section (per-CPU, data, structs, runs), in percent;
/// what a section leaves unused carries over to the next.
const SHARES: [usize; 4] = [30, 25, 35, 10];

/// Plans the report of `r` for `view`.
pub fn plan<'r>(r: &'r Report<'r>, view: View) -> Plan<'r> {
    let summary = summary_rows(r);
    let nothing = summary.iter().all(|(_, c)| {
        c.changed + c.added + c.removed + c.line_offset_changed + c.runs + c.whole_line_runs == 0
    });
    let candidates = [
        percpu_items(r, view),
        data_items(r, view),
        struct_items(r, view),
        run_items(r, view),
    ];
    let titles = [
        (
            SectionKind::Percpu,
            "per-CPU (offsets from __per_cpu_start)",
        ),
        (
            SectionKind::Data,
            "data objects (cacheline-aligned, write-hot with new neighbours, new straddlers)",
        ),
        (
            SectionKind::Structs,
            "structs with a global or per-CPU instance",
        ),
        (SectionKind::DataRuns, "data shift runs (largest first)"),
    ];
    let mut carry = 0usize;
    let mut cut = 0usize;
    let mut sections = Vec::new();
    for (i, items) in candidates.into_iter().enumerate() {
        let mut budget = match view.limit {
            Some(l) => l * SHARES[i] / 100 + carry,
            None => usize::MAX,
        };
        let mut kept = Vec::new();
        for item in items {
            let (height, pinned) = (item.height(), item.pinned());
            if pinned || height <= budget {
                if !pinned {
                    budget -= height;
                }
                kept.push(item);
            } else {
                cut += 1;
                budget = 0;
            }
        }
        carry = if view.limit.is_some() { budget } else { 0 };
        if !kept.is_empty() {
            let (kind, title) = titles[i];
            sections.push(Section {
                kind,
                title,
                items: kept,
            });
        }
    }
    Plan {
        report: r,
        empty: nothing && r.pinned_symbols.is_empty() && r.pinned_structs.is_empty(),
        summary,
        sections,
        text: text_section(r, view),
        cut,
        view,
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

fn is_pinned(r: &Report<'_>, name: &crate::diff::SymbolName<'_>) -> bool {
    r.pinned_symbols.iter().any(|p| name.is(p))
}

/// Per-CPU: runs (each with its cause), then changes outside flagged runs, pinned
/// first, then by risk (a write-hot variable with a new neighbour first).
fn percpu_items<'r>(r: &'r Report<'r>, view: View) -> Vec<Item<'r>> {
    let all = view.limit.is_none();
    let mut items: Vec<Item<'_>> = r
        .runs
        .iter()
        .filter(|x| x.space == Space::Percpu)
        .map(Item::Run)
        .collect();
    let mut percpu: Vec<&PlacementChange> = r.percpu.iter().map(Box::as_ref).collect();
    percpu.sort_by_key(|c| (!is_pinned(r, &c.name), c.risk, c.place.old));
    for c in percpu {
        let pinned = is_pinned(r, &c.name);
        let in_run = c.run.is_some_and(|i| !r.runs[i].whole_lines);
        if pinned || all || (c.listed_by_default() && !in_run) {
            items.push(Item::Placement {
                change: c,
                detail: Detail { pinned, all },
            });
        }
    }
    items
}

/// Data objects: line-aligned, write-hot and straddling ones (every one with --all),
/// by risk (write-hot with a new write-hot neighbour, line-aligned moved in its line,
/// ...), then severity and hot members.
fn data_items<'r>(r: &'r Report<'r>, view: View) -> Vec<Item<'r>> {
    let all = view.limit.is_none();
    let mut data: Vec<&PlacementChange> = r
        .data
        .iter()
        .map(Box::as_ref)
        .filter(|c| is_pinned(r, &c.name) || all || c.listed_by_default())
        .collect();
    data.sort_by_key(|c| {
        (
            !is_pinned(r, &c.name),
            c.risk,
            c.severity,
            c.gained_hot_neighbours.is_empty(),
            std::cmp::Reverse(c.hot_members),
            c.place.old,
        )
    });
    data.into_iter()
        .map(|c| Item::Placement {
            change: c,
            detail: Detail {
                pinned: is_pinned(r, &c.name),
                all,
            },
        })
        .collect()
}

/// Structs with an instance (or in a group, or asked for); most members changing line
/// (or added/removed) first: those move hot fields.
fn struct_items<'r>(r: &'r Report<'r>, view: View) -> Vec<Item<'r>> {
    let all = view.limit.is_none();
    let pinned = |n: &str| r.pinned_structs.iter().any(|p| p == n);
    let mut structs: Vec<&StructChange> = r
        .structs
        .iter()
        .filter(|s| {
            all || pinned(&s.name)
                || matches!(s.severity, Severity::StructWithInstance | Severity::Group)
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
                },
            }
        })
        .collect()
}

/// Data shift runs that change line membership (whole-line ones too with --all),
/// largest first.
fn run_items<'r>(r: &'r Report<'r>, view: View) -> Vec<Item<'r>> {
    let all = view.limit.is_none();
    let mut runs: Vec<&ShiftRun> = r
        .runs
        .iter()
        .filter(|x| x.space == Space::Global && !x.functions && (all || !x.whole_lines))
        .collect();
    runs.sort_by(|a, b| b.count.cmp(&a.count).then(a.start.old.cmp(&b.start.old)));
    runs.into_iter().map(Item::Run).collect()
}

/// Functions: the two largest runs that change line membership (all with --all),
/// then the functions asked for by name (every changed function with --all).
fn text_section<'r>(r: &'r Report<'r>, view: View) -> TextSection<'r> {
    let all = view.limit.is_none();
    let mut runs: Vec<&ShiftRun> = r
        .runs
        .iter()
        .filter(|x| x.functions && !x.whole_lines)
        .collect();
    runs.sort_by(|a, b| b.count.cmp(&a.count).then(a.start.old.cmp(&b.start.old)));
    if !all {
        runs.truncate(2);
    }
    let functions = r
        .functions
        .iter()
        .filter(|c| all || r.pinned_symbols.iter().any(|p| c.name.is(p)))
        .map(|c| FunctionItem {
            change: c,
            run: c.run.and_then(|i| r.runs.get(i)).filter(|_| !all),
        })
        .collect();
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
            Item::Run(_) => false,
            Item::Placement { detail, .. } | Item::Struct { detail, .. } => detail.pinned,
        }
    }

    /// The name the item is known by (a run: its first symbol).
    pub fn name(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Item::Run(r) => r.first.as_str().into(),
            Item::Placement { change, .. } => change.name.to_string().into(),
            Item::Struct { change, .. } => change.name.as_str().into(),
        }
    }

    /// Lines the item takes in the text report: what the budget counts.
    pub fn height(&self) -> usize {
        match self {
            Item::Run(_) => 1,
            Item::Placement { change, detail } => {
                let tenants = usize::from(change.co_tenants_changed || detail.pinned);
                let members = if detail.full() {
                    change.member_lines.len()
                } else {
                    usize::from(!change.member_lines.is_empty())
                };
                2 + tenants + members
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{DiffOptions, diff};
    use crate::load::{InputFile, LoadOptions};
    use crate::report::diff_lines::item_lines;

    /// The budget counts what the text prints: every item's height is the number of
    /// lines the text renderer draws for it, in the default view, with --all, and with
    /// everything pinned (which shows structs side by side).
    #[test]
    fn heights_are_the_lines_the_text_draws() {
        let open = |n: &str| InputFile::open(std::path::Path::new(n)).expect("fixture");
        let (old, new) = (open("testdata/old.elf"), open("testdata/new.elf"));
        let load = LoadOptions::default();
        let (old, new) = (old.load(&load).unwrap(), new.load(&load).unwrap());
        let everything = crate::show::globs(&["*".to_string()]).unwrap();
        let pinned = DiffOptions {
            pinned_symbols: Some(everything.clone()),
            pinned_structs: Some(everything),
            fail_on: None,
            listed_only: false,
        };
        let mut checked = 0;
        for options in [DiffOptions::default(), pinned] {
            let report = diff(&old, &new, &options);
            for limit in [Some(54), Some(5), None] {
                let p = plan(&report, View { limit });
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
    /// it keeps exactly the listable data objects and no function.
    #[test]
    fn keeping_only_the_listed_changes_changes_no_limited_view() {
        let open = |n: &str| InputFile::open(std::path::Path::new(n)).expect("fixture");
        let (old, new) = (open("testdata/old.elf"), open("testdata/new.elf"));
        let load = LoadOptions::default();
        let (old, new) = (old.load(&load).unwrap(), new.load(&load).unwrap());
        let full = diff(&old, &new, &DiffOptions::default());
        let listed_only = DiffOptions {
            listed_only: true,
            ..DiffOptions::default()
        };
        let listed = diff(&old, &new, &listed_only);
        for limit in [Some(54), Some(5)] {
            let (a, b) = (plan(&full, View { limit }), plan(&listed, View { limit }));
            assert_eq!(
                crate::report::diff_text::render(&a),
                crate::report::diff_text::render(&b)
            );
            assert_eq!(
                crate::report::diff_markdown::render(&a),
                crate::report::diff_markdown::render(&b)
            );
            assert_eq!(
                crate::report::html::diff(&a, None),
                crate::report::html::diff(&b, None)
            );
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
        assert_eq!((full.functions.len(), listed.functions.len()), (6, 0));
    }

    /// A budget of 5 lines keeps only what fits: the fixture's per-CPU section gets
    /// 5 * 30% = 1 line, so one run, and every later item over budget is cut.
    #[test]
    fn a_small_budget_cuts_items_and_counts_them() {
        let open = |n: &str| InputFile::open(std::path::Path::new(n)).expect("fixture");
        let (old, new) = (open("testdata/old.elf"), open("testdata/new.elf"));
        let load = LoadOptions::default();
        let (old, new) = (old.load(&load).unwrap(), new.load(&load).unwrap());
        let report = diff(&old, &new, &DiffOptions::default());
        let all = plan(&report, View { limit: None });
        let small = plan(&report, View { limit: Some(5) });
        let count = |p: &Plan<'_>| p.sections.iter().map(|s| s.items.len()).sum::<usize>();
        assert_eq!(all.cut, 0);
        assert_eq!(
            count(&small) + small.cut,
            count(&plan(
                &report,
                View {
                    limit: Some(10_000)
                }
            ))
        );
        assert_eq!(small.sections[0].kind, SectionKind::Percpu);
        assert_eq!(small.sections[0].items.len(), 1);
    }
}
