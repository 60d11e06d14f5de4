//! What a `suggest` report says, worded once for every format: a title, a note on
//! flags without fixes, then per flagged object, member, function or group (or, on one
//! build, per failing rule) its facts, its fixes cheapest first with what each
//! restores and costs and the C to paste, and the rule that keeps it. The text,
//! Markdown and HTML renderers only lay these sentences out.

use std::path::Path;

use layout_diff_core::check::eval::Table;
use layout_diff_core::model::Space;
use layout_diff_core::suggest::Suggestions;

/// A whole `suggest` report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    /// The report's title line.
    pub title: String,
    /// A paragraph before the items (flags of other kinds).
    pub note: Option<String>,
    /// The flagged things and their fixes, in the report's order.
    pub items: Vec<Item>,
    /// A closing sentence when there is nothing to fix.
    pub closing: Option<String>,
}

/// One flagged thing (or failing rule) and its fixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// What is flagged, in one line.
    pub heading: String,
    /// What the build says of it, one line each.
    pub facts: Vec<String>,
    /// Why there is no fix, when there is none.
    pub none: Option<String>,
    /// Its fixes, the best first.
    pub fixes: Vec<FixText>,
    /// A `check` rules snippet that keeps the fix.
    pub rule: Option<String>,
}

/// One fix: its one-line summary, lines said of it, and the code to paste.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixText {
    /// The fix in one line.
    pub summary: String,
    /// What else is said of it (its cost, what it leaves flagged).
    pub extra: Vec<String>,
    /// The code to paste.
    pub code: String,
}

/// The report of `suggest OLD NEW`.
pub fn of_pair(found: &Suggestions, old: &Path, new: &Path) -> Doc {
    let other = (found.other_flags > 0).then(|| {
        format!(
            "{} flagged change{} of other kinds (past the limit of items per run, or of a kind no fix is tried for): no fix proposed for those",
            found.other_flags,
            plural(found.other_flags)
        )
    });
    let note = joined(hot_notes(found).into_iter().chain(other));
    let mut items = members(found);
    items.extend(functions(found));
    items.extend(groups(found));
    items.extend(objects(found));
    let nothing = found.suggestions.is_empty()
        && found.members.is_empty()
        && found.functions.is_empty()
        && found.groups.is_empty();
    Doc {
        title: format!(
            "layout-diff suggest  {}  ->  {}",
            old.display(),
            new.display()
        ),
        note,
        items,
        closing: nothing.then(|| {
            "no hot object is flagged for its neighbours or alignment, and no struct for a hot member: nothing to fix".to_string()
        }),
    }
}

/// The report of `suggest IMAGE --rules FILE` (or `--hot FILE`); `from` says which.
pub fn of_image(found: &Suggestions, image: &Path, from: &str) -> Doc {
    Doc {
        title: format!("layout-diff suggest  {}  ({from})", image.display()),
        note: joined(hot_notes(found)),
        items: found.rules.iter().map(rule_item).collect(),
        closing: found
            .rules
            .is_empty()
            .then(|| "no placement rule fails: nothing to fix".to_string()),
    }
}

/// `--hot FILE: 12 of 15 entries matched` for each `--hot` file partly matched.
fn hot_notes(found: &Suggestions) -> Vec<String> {
    found
        .hot_files
        .iter()
        .filter(|f| f.is_partial())
        .map(|f| f.note())
        .collect()
}

/// Notes one to a line, or none.
fn joined(notes: impl IntoIterator<Item = String>) -> Option<String> {
    let notes: Vec<String> = notes.into_iter().collect();
    (!notes.is_empty()).then(|| notes.join("\n"))
}

fn objects(found: &Suggestions) -> Vec<Item> {
    found
        .suggestions
        .iter()
        .map(|s| {
            let mut facts = Vec::new();
            if !s.neighbours.is_empty() {
                let what = if s.flag.starts_with("asked") {
                    "new neighbours"
                } else {
                    "new written neighbours"
                };
                facts.push(format!("{what}: {}", s.neighbours.join(", ")));
            }
            let fixes: Vec<FixText> = s
                .fixes
                .iter()
                .map(|f| match &f.not_predicted {
                    Some(why) => fix(format!("{}: not predicted ({why})", f.change), &f.declaration),
                    None => fix(
                        format!(
                            "{}: {}; section end {:+} B, {} other object{} moved (at most {:+} B); {} line{}; {} flag{} in the predicted diff",
                            f.change,
                            restores(f.restores),
                            f.section_bytes,
                            f.shifted,
                            plural(f.shifted),
                            f.max_shift,
                            f.lines,
                            plural(f.lines),
                            f.flags_after,
                            plural(f.flags_after),
                        ),
                        &f.declaration,
                    ),
                })
                .collect();
            let none = fixes.is_empty().then(|| {
                "no fix found: neither it nor its neighbours can be aligned here".to_string()
            });
            Item {
                heading: format!(
                    "{} ({}{})  flagged: {}",
                    s.object,
                    s.type_name.as_deref().unwrap_or("untyped"),
                    match s.space {
                        Space::Percpu => ", per-CPU",
                        Space::Global => "",
                    },
                    s.flag
                ),
                facts,
                rule: none.is_none().then(|| s.rule.clone()),
                none,
                fixes,
            }
        })
        .collect()
}

/// The structs flagged for a hot member on another line, with their fixes.
fn members(found: &Suggestions) -> Vec<Item> {
    found
        .members
        .iter()
        .map(|m| {
            let mut facts = Vec::new();
            if !m.pushed_by.is_empty() {
                facts.push(format!("pushed by: {}", m.pushed_by.join(", ")));
            }
            if let Some(note) = &m.note {
                facts.push(format!("note: {note}"));
            }
            let fixes: Vec<FixText> = m
                .fixes
                .iter()
                .map(|f| {
                    fix(
                        format!(
                            "{}: {}; {} on line {}; {:+} B per instance ({} instance{}); {} flag{} in the predicted diff",
                            f.change,
                            restores(f.restores),
                            m.member,
                            f.line,
                            f.instance_bytes,
                            f.instances,
                            plural(f.instances),
                            f.flags_after,
                            plural(f.flags_after),
                        ),
                        &f.declaration,
                    )
                })
                .collect();
            Item {
                heading: format!(
                    "struct {}: hot member {} moved from line {} to line {}{}",
                    m.struct_name,
                    m.member,
                    m.line_old,
                    m.line_new,
                    m.evidence
                        .as_deref()
                        .map_or(String::new(), |e| format!(" ({e})"))
                ),
                facts,
                none: fixes.is_empty().then(|| "no fix found".to_string()),
                fixes,
                rule: m.rule.clone(),
            }
        })
        .collect()
}

/// The functions flagged for their phase, with their fixes.
fn functions(found: &Suggestions) -> Vec<Item> {
    found
        .functions
        .iter()
        .map(|f| {
            let fixes: Vec<FixText> = f
                .fixes
                .iter()
                .map(|x| {
                    fix(
                        format!(
                            "{}: {}; start mod line {:#04x}, {} line{}; section end {:+} B, {} other function{} moved (at most {:+} B); {} flag{} in the predicted diff",
                            x.change,
                            match (x.no_more_lines, x.shifted == 0 && x.section_bytes == 0) {
                                (true, true) => "keeps it where NEW has it: on a line start, covering no more lines than in OLD (OLD's mid-line start no alignment gives back)",
                                (true, false) => "starts it on a line, covering no more lines than in OLD (OLD's mid-line start no alignment gives back)",
                                _ => restores(x.restores),
                            },
                            x.phase,
                            x.lines,
                            plural(x.lines),
                            x.section_bytes,
                            x.shifted,
                            plural(x.shifted),
                            x.max_shift,
                            x.flags_after,
                            plural(x.flags_after),
                        ),
                        &x.declaration,
                    )
                })
                .collect();
            Item {
                heading: format!(
                    "function {}{}: start mod line {:#04x} -> {:#04x} ({:#x} -> {:#x}), {} -> {} line{}",
                    f.function,
                    f.unit
                        .as_deref()
                        .map_or(String::new(), |u| format!(" ({u})")),
                    f.phase_old,
                    f.phase_new,
                    f.address_old,
                    f.address_new,
                    f.lines_old,
                    f.lines_new,
                    plural(f.lines_new),
                ),
                facts: Vec::new(),
                none: fixes.is_empty().then(|| "no fix found".to_string()),
                fixes,
                rule: Some(f.rule.clone()),
            }
        })
        .collect()
}

/// The cache-line groups flagged for their lines, with their fixes or their excess.
fn groups(found: &Suggestions) -> Vec<Item> {
    found
        .groups
        .iter()
        .map(|g| {
            let mut facts = Vec::new();
            if !g.added_or_grown.is_empty() {
                facts.push(format!("added or grown in it: {}", g.added_or_grown.join(", ")));
            }
            let none = match g.exceeds_by {
                Some(over) if g.fixes.is_empty() => Some(format!(
                    "no fix: it is {over} B larger than its {} line{} can hold; a member has to leave it or shrink",
                    g.lines_old,
                    plural(g.lines_old)
                )),
                Some(over) => {
                    facts.push(format!(
                        "it is {over} B larger than its {} line{} can hold: members leave it",
                        g.lines_old,
                        plural(g.lines_old)
                    ));
                    None
                }
                None if g.fixes.is_empty() => Some("no fix found".to_string()),
                None => None,
            };
            let fixes = g
                .fixes
                .iter()
                .map(|f| {
                    fix(
                        format!(
                            "{}: {}; {} line{}; {:+} B per instance ({} instance{}); {} flag{} in the predicted diff",
                            f.change,
                            restores(f.restores),
                            f.lines,
                            plural(f.lines),
                            f.instance_bytes,
                            f.instances,
                            plural(f.instances),
                            f.flags_after,
                            plural(f.flags_after),
                        ),
                        &f.declaration,
                    )
                })
                .collect();
            Item {
                heading: format!(
                    "struct {} group {}: {}+{} B, {} line{} -> {}+{} B, {} line{} (its size needs {})",
                    g.struct_name,
                    g.group,
                    g.offset_old,
                    g.size_old,
                    g.lines_old,
                    plural(g.lines_old),
                    g.offset_new,
                    g.size_new,
                    g.lines_new,
                    plural(g.lines_new),
                    g.lines_needed
                ),
                facts,
                none,
                fixes,
                rule: Some(g.rule.clone()),
            }
        })
        .collect()
}

/// One failing rule of one build and its fixes.
fn rule_item(r: &layout_diff_core::suggest::RuleSuggestion) -> Item {
    let none = match &r.note {
        Some(note) => Some(format!("no fix: {note}")),
        None if r.fixes.is_empty() => Some("no fix found".to_string()),
        None => None,
    };
    let fixes = r
        .fixes
        .iter()
        .map(|f| {
            let cost = if let Some(n) = f.instances {
                format!(
                    "{:+} B per instance ({n} instance{})",
                    f.instance_bytes,
                    plural(n)
                )
            } else if f.instance_bytes != 0 || r.table == Table::Group {
                format!("{:+} B per instance", f.instance_bytes)
            } else {
                format!(
                    "section end {:+} B, {} other symbol{} moved (at most {:+} B)",
                    f.section_bytes,
                    f.shifted,
                    plural(f.shifted),
                    f.max_shift
                )
            };
            FixText {
                summary: format!(
                    "{}: {}; {cost}; {} rule{} failing after",
                    f.change,
                    if f.passes { "passes" } else { "still fails" },
                    f.failing_after,
                    plural(f.failing_after),
                ),
                extra: if f.moves_hot.is_empty() {
                    Vec::new()
                } else {
                    vec![format!("moves hot: {}", f.moves_hot.join(", "))]
                },
                code: f.declaration.clone(),
            }
        })
        .collect();
    Item {
        heading: format!(
            "FAIL {} {}: {} = {}{}",
            table_name(r.table),
            r.target.as_deref().unwrap_or(&r.pattern),
            r.key,
            r.expected,
            if r.offenders.is_empty() {
                String::new()
            } else {
                format!(" (at fault: {})", r.offenders.join(", "))
            }
        ),
        facts: Vec::new(),
        none,
        fixes,
        rule: r.rule.clone(),
    }
}

fn fix(summary: String, code: &str) -> FixText {
    FixText {
        summary,
        extra: Vec::new(),
        code: code.to_string(),
    }
}

fn table_name(t: Table) -> &'static str {
    match t {
        Table::Struct => "struct",
        Table::Symbol => "symbol",
        Table::Function => "function",
        Table::Group => "group",
    }
}

fn restores(yes: bool) -> &'static str {
    if yes { "restores" } else { "does not restore" }
}

pub(crate) fn plural<N: PartialEq + From<u8>>(n: N) -> &'static str {
    if n == N::from(1) { "" } else { "s" }
}
