//! The judgement alone: what `suggest` reads of a candidate's diff against OLD (the
//! struct, data and function changes, and how many are flagged), without the shift
//! runs, root causes and summary a whole `diff` adds, which no flag count reads.

use super::*;

/// The changes of one diff and how many of them are flagged: `diff`'s `structs`,
/// `data`, `percpu`, `functions` and `flagged`, the changes without their runs.
#[allow(clippy::vec_box)]
pub struct Judgement<'a> {
    /// Flagged changes of every row (`Report::flagged`).
    pub flagged: usize,
    /// As `Report::structs`.
    pub structs: Vec<StructChange>,
    /// As `Report::data`, without runs.
    pub data: Vec<Box<PlacementChange<'a>>>,
    /// As `Report::percpu`, without runs.
    pub percpu: Vec<Box<PlacementChange<'a>>>,
    /// As `Report::functions`, without runs.
    pub functions: Vec<Box<FunctionChange<'a>>>,
}

/// Judges `old -> new` as `diff` does, and counts its flags; the fields it shares with
/// `diff(old, new, options)` are equal to its.
pub fn judge<'a>(
    old: &'a Image<'_>,
    new: &'a Image<'_>,
    options: &DiffOptions<'a>,
) -> Judgement<'a> {
    let line_size = new.line_size;
    let hotness: &'a Hotness = options
        .hotness
        .unwrap_or_else(|| crate::evidence::builtin());
    let fail_on = options
        .fail_on
        .clone()
        .unwrap_or_else(Category::default_fail_on);
    let pinned_sym = |s: &crate::model::Symbol<'_>| {
        options
            .pinned_symbols
            .as_ref()
            .is_some_and(|g| s.any_name(|n| g.is_match(n)))
    };
    let listed_only = options.listed_only && options.pinned_symbols.is_none();
    let fails = |s: Severity| s.category().is_some_and(|c| fail_on.contains(&c));
    let pinned_struct = |name: &str| {
        options
            .pinned_structs
            .as_ref()
            .is_some_and(|g| g.is_match(name))
    };
    let ((pairing, _), (structs, indexes)) =
        pair_and_compare(old, new, line_size, &pinned_struct, hotness);
    let sides = placement::Sides {
        pairing: &pairing,
        old,
        new,
        line_size,
        hotness,
        ix: indexes,
    };
    let changes = judge_pairs(&sides, listed_only, &pinned_sym, &fails);
    let flagged = structs.iter().filter(|s| s.severity.flagged()).count()
        + changes.iter().flatten().filter(|c| judged_flagged(c)).count();
    let listed = Listed::of(changes);
    Judgement {
        flagged,
        structs,
        data: listed.data,
        percpu: listed.percpu,
        functions: listed.functions,
    }
}

/// Whether one judged change counts as flagged (`Marks::flagged`).
fn judged_flagged(c: &Judged<'_>) -> bool {
    match c {
        Judged::Data(_, d) => d.flagged,
        Judged::Function(f) => f.flagged,
        Judged::Counted(_, m) => m.flagged,
        Judged::Moved => false,
    }
}
