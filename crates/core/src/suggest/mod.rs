//! Fixes for flagged objects: for each hot object the diff flags, the changes that
//! would give it back its line facts (the object or its new written neighbour aligned
//! to a line, with `____cacheline_aligned_in_smp` or `DEFINE_PER_CPU_ALIGNED`), each
//! checked by predicting the build it makes and diffing that against OLD again, with
//! its cost in bytes and lines. The cheapest that clears the flag comes first. An
//! object that lost `__read_mostly` is first offered it back.

mod base;
pub mod functions;
pub mod groups;
pub mod image;
mod into_group;
pub mod members;
mod structs;

use rayon::prelude::*;
use serde::Serialize;

pub use functions::{FunctionFix, FunctionSuggestion};
pub use groups::{GroupFix, GroupSuggestion};
pub use image::{RuleFix, RuleSuggestion};
pub use members::{MemberFix, MemberSuggestion};

use crate::diff::{DiffOptions, PlacementChange, Root, Severity, diff};
use crate::model::{Binding, Image, Space, SymbolKind};
use crate::whatif::Change;
use base::Base;

/// One candidate fix for one flagged object, checked.
#[derive(Debug, Clone, Serialize)]
pub struct Fix {
    /// The change, as `whatif` takes it.
    pub change: String,
    /// The changed declaration, as C to paste.
    pub declaration: String,
    /// Whether the predicted build clears the object's flag.
    pub restores: bool,
    /// Bytes the change adds to the output section (the end of its last object).
    pub section_bytes: i64,
    /// Objects other than the changed one that move, and the most any of them moves:
    /// what the change costs its neighbours.
    pub shifted: usize,
    /// The most any of them moves, in bytes.
    pub max_shift: i64,
    /// Lines the flagged object covers after the change.
    pub lines: u64,
    /// Flags in the whole predicted diff against OLD (the flag itself included when
    /// not cleared): a fix that moves the problem elsewhere shows here.
    pub flags_after: usize,
    /// What the model could not do for this candidate (then `restores` is false and
    /// the numbers are zero: it is not predicted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_predicted: Option<String>,
}

/// The fixes for one flagged object, cheapest restoring first.
#[derive(Debug, Clone, Serialize)]
pub struct Suggestion {
    /// The flagged object.
    pub object: String,
    /// Global data or per-CPU.
    pub space: Space,
    /// Its C type, when known.
    pub type_name: Option<String>,
    /// Why it is flagged: the category and the new written neighbours.
    pub flag: String,
    /// Its new neighbours (written ones, when any are).
    pub neighbours: Vec<String>,
    /// The fixes, cheapest restoring first.
    pub fixes: Vec<Fix>,
    /// A `check` rule that keeps the best fix in place.
    pub rule: String,
}

/// The fixes found, and the flags they do not cover.
#[derive(Debug, Clone, Serialize)]
pub struct Suggestions {
    /// The fixes for each flagged object.
    pub suggestions: Vec<Suggestion>,
    /// Structs flagged for a hot member that changed line, with their fixes.
    pub members: Vec<MemberSuggestion>,
    /// Functions flagged for their phase, with their fixes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<FunctionSuggestion>,
    /// Cache-line groups flagged for touching more lines, with their fixes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupSuggestion>,
    /// On one image (`suggest IMAGE --rules FILE` or `--hot FILE`): each failing
    /// placement rule with the fixes that make it pass.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleSuggestion>,
    /// Flagged changes of other kinds (flags past the per-run limits, or of a kind no
    /// fix is tried for), for which no fix is proposed.
    pub other_flags: usize,
    /// How much of each `--hot` file the builds have (`evidence::gather`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hot_files: Vec<crate::evidence::gather::HotFileMatch>,
}

/// Objects considered per run: each candidate costs one prediction and one diff.
const MAX_FLAGGED: usize = 8;
/// New written neighbours tried as the thing to align, per flagged object.
const MAX_NEIGHBOURS: usize = 3;

/// The suggestions for every flagged data object of `old -> new`, at most
/// `MAX_FLAGGED` of them, in the report's order.
/// Objects named in `asked` are taken too, whatever their evidence, when they gained
/// neighbours: restoring them means no new neighbour against OLD.
pub fn suggest<'d>(
    old: &Image<'d>,
    new: &Image<'d>,
    options: &DiffOptions<'_>,
    asked: &[String],
) -> Suggestions {
    // Every candidate is diffed against OLD: its link model is built once for all.
    let old_link;
    let with_link;
    let options = match options.old_link {
        Some(_) => options,
        None => {
            old_link = crate::link::LinkMap::build(old);
            with_link = DiffOptions {
                old_link: Some(&old_link),
                ..options.clone()
            };
            &with_link
        }
    };
    let report = diff(old, new, options);
    let new = &Base::new(old, new, options);
    // Members, functions and groups: each fix is a prediction and a whole diff, so the
    // three kinds are found side by side.
    let (mut members, (functions, groups)) = rayon::join(
        || members::suggest_members(old, new, &report.structs),
        || {
            rayon::join(
                || functions::suggest_functions(old, new, &report.functions),
                || groups::suggest_groups(new, &report.structs),
            )
        },
    );
    into_group::add_fixes(old, new, &report.structs, &mut members);
    let other_flags = other_flags(&report, &members, functions.len(), &groups);
    let out = flagged_objects(&report, asked)
        .into_iter()
        .map(|c| object_suggestion(old, new, &report, c, asked))
        .collect();
    Suggestions {
        suggestions: out,
        members,
        functions,
        groups,
        rules: Vec::new(),
        other_flags,
        hot_files: Vec::new(),
    }
}

/// The flags of the report no suggestion answers: all less those of objects, of hot
/// members fixed in their struct, of the functions and of the groups suggested.
fn other_flags(
    report: &crate::diff::Report<'_>,
    members: &[MemberSuggestion],
    functions: usize,
    groups: &[GroupSuggestion],
) -> usize {
    let object_flags = report
        .data
        .iter()
        .chain(&report.percpu)
        .filter(|c| matches!(c.severity, Severity::HotNeighbour | Severity::LostAlignment))
        .count();
    // A struct flagged for its hot member, and each instance flagged for it, are fixed
    // in the struct.
    let fixed_in_struct = |t: Option<&str>| {
        t.is_some_and(|t| {
            members
                .iter()
                .any(|m| t == m.struct_name || t == format!("struct {}", m.struct_name))
        })
    };
    let member_flags = report
        .structs
        .iter()
        .filter(|s| members::member_target(s))
        .count()
        + report
            .data
            .iter()
            .chain(&report.percpu)
            .filter(|c| c.severity == Severity::HotMember && fixed_in_struct(c.type_name))
            .count();
    let group_flags = report
        .structs
        .iter()
        .filter(|s| s.severity == Severity::Group)
        .filter(|s| groups.iter().any(|g| g.struct_name == s.name))
        .count();
    report
        .flagged
        .saturating_sub(object_flags)
        .saturating_sub(member_flags)
        .saturating_sub(functions)
        .saturating_sub(group_flags)
}

/// Whether `name` is one of the objects asked for.
fn is_asked(asked: &[String], name: &str) -> bool {
    asked.iter().any(|a| a == name)
}

/// The objects a suggestion is made for (at most `MAX_FLAGGED`): those flagged for a
/// neighbour or a lost alignment, and those asked for that gained neighbours.
fn flagged_objects<'r, 'a>(
    report: &'r crate::diff::Report<'a>,
    asked: &[String],
) -> Vec<&'r PlacementChange<'a>> {
    report
        .data
        .iter()
        .chain(&report.percpu)
        .map(|c| &**c)
        .filter(|c| {
            matches!(c.severity, Severity::HotNeighbour | Severity::LostAlignment)
                || (is_asked(asked, &c.name.to_string()) && c.sharing_grew)
        })
        .take(MAX_FLAGGED)
        .collect()
}

/// The suggestion for flagged object `c`: its fixes (`__read_mostly` back, and each
/// candidate set aligned), best first.
fn object_suggestion(
    old: &Image<'_>,
    new: &Base<'_, '_>,
    report: &crate::diff::Report<'_>,
    c: &PlacementChange<'_>,
    asked: &[String],
) -> Suggestion {
    let name = c.name.to_string();
    let neighbours = gained_neighbours(c);
    let groups = candidate_groups(new, report, c, &name, &neighbours);
    let mut fixes = Vec::new();
    if lost_read_mostly(old, new, c) {
        fixes.push(read_mostly_fix(new, &name, c, is_asked(asked, &name)));
    }
    // Each candidate is a prediction and a whole diff: side by side, in order.
    let candidates: Vec<Fix> = groups
        .par_iter()
        .filter_map(|group| aligned_fix(new, &name, group, is_asked(asked, &name)))
        .collect();
    fixes.extend(candidates);
    // `__read_mostly` back first when it restores: it costs no alignment padding
    // and it is what the object was.
    fixes.sort_by_key(|f| {
        (
            !f.restores,
            !f.change.starts_with("--read-mostly"),
            f.section_bytes,
            f.shifted,
            f.flags_after,
        )
    });
    let rule = rule_for(&name, &neighbours, fixes.first(), new.line_size);
    Suggestion {
        object: name,
        space: c.space,
        type_name: c.type_name.map(str::to_string),
        flag: match c.severity.category() {
            Some(k) if c.severity.flagged() => k.name().to_string(),
            _ => "asked for, gained neighbours".to_string(),
        },
        neighbours,
        fixes,
        rule,
    }
}

/// The neighbours `c` gained that are written; for an object asked for by name,
/// every neighbour it gained.
fn gained_neighbours(c: &PlacementChange<'_>) -> Vec<String> {
    if c.written_neighbours.is_empty() {
        let before: Vec<String> = c.tenants[..c.old_tenants]
            .iter()
            .map(|t| t.name().to_string())
            .collect();
        c.tenants[c.old_tenants..]
            .iter()
            .map(|t| t.name().to_string())
            .filter(|n| !before.contains(n))
            .collect()
    } else {
        c.written_neighbours
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}

/// Candidates, each a set aligned together: the object, each new written neighbour,
/// and the objects whose growth shifted it (its root cause: the resized instances of
/// a grown struct, as mces_seen and injectm of struct mce).
fn candidate_groups(
    new: &Base<'_, '_>,
    report: &crate::diff::Report<'_>,
    c: &PlacementChange<'_>,
    name: &str,
    neighbours: &[String],
) -> Vec<Vec<String>> {
    let mut groups: Vec<Vec<String>> = vec![vec![name.to_string()]];
    groups.extend(
        neighbours
            .iter()
            .take(MAX_NEIGHBOURS)
            .map(|n| vec![n.clone()]),
    );
    if let Some(root) = c
        .run
        .and_then(|r| report.runs.get(r))
        .and_then(|r| r.root)
        .and_then(|i| report.causes.get(i))
    {
        let mut grown: Vec<String> = match &root.root {
            Root::Struct { .. } => root.via.clone(),
            Root::Resized { symbol, .. } => vec![symbol.clone()],
            _ => Vec::new(),
        };
        // Those that shifted it: in its own space.
        grown.retain(|g| new.any_answering(g, c.space));
        if !grown.is_empty() && !groups.contains(&grown) {
            groups.push(grown);
        }
    }
    groups
}

/// The fix that aligns each object of `group` to a line (`name`'s fix, `asked` when
/// it was asked for), predicted and diffed; none when one of them is not an object
/// of NEW or the prediction fails.
fn aligned_fix(new: &Base<'_, '_>, name: &str, group: &[String], asked: bool) -> Option<Fix> {
    let syms: Vec<&crate::model::Symbol<'_>> = group
        .iter()
        .filter_map(|t| new.object_answering(t))
        .collect();
    if syms.len() != group.len() {
        return None;
    }
    let changes: Vec<Change> = group
        .iter()
        .zip(&syms)
        .map(|(t, sym)| match sym.space {
            Space::Global => Change::SymbolAlign {
                name: t.clone(),
                align: new.line_size,
            },
            Space::Percpu => Change::PercpuAligned {
                name: t.clone(),
                declaration: true,
            },
        })
        .collect();
    let p = new.predict(&changes).ok()?;
    let sym = syms[0];
    let names: Vec<&str> = syms.iter().map(|s| s.name).collect();
    let shifted = new.shifts(
        &p.image,
        (SymbolKind::Object, sym.space, sym.section),
        &names,
    );
    let after = new.judge(&p.image);
    let (still, restores) = object_after(&after, name, asked);
    let lines = still.map_or_else(
        || lines_of(&p.image, name),
        |a| crate::layout::place(a.place.new, a.size.new, new.line_size).lines,
    );
    Some(Fix {
        change: changes_args(&changes),
        declaration: syms
            .iter()
            .map(|s| declaration(new, s))
            .collect::<Vec<_>>()
            .join("\n"),
        restores,
        section_bytes: section_end(&p.image, SymbolKind::Object, sym.space, sym.section) as i64
            - section_end(new, SymbolKind::Object, sym.space, sym.section) as i64,
        shifted: shifted.0,
        max_shift: shifted.1,
        lines,
        flags_after: after.flagged,
        not_predicted: None,
    })
}

/// Object `name` in the diff of OLD against a fix's prediction, and whether the fix
/// restores it: it no longer counts on its line, nor (when its sharing was `asked`
/// about) shares more.
fn object_after<'r, 'a>(
    after: &'r crate::diff::Judgement<'a>,
    name: &str,
    asked: bool,
) -> (Option<&'r PlacementChange<'a>>, bool) {
    let still = after
        .data
        .iter()
        .chain(&after.percpu)
        .find(|a| a.name.to_string() == name)
        .map(|a| &**a);
    let restores = still.is_none_or(|a| !(on_its_line(a.severity) || asked && a.sharing_grew));
    (still, restores)
}

/// Whether a predicted severity still counts against a fix: any flag but `adjacent`
/// (a written member across the 128-byte pair), which a line-aligned fix can leave
/// and the predicted diff's flags still count.
fn on_its_line(s: crate::diff::changes::Severity) -> bool {
    s.flagged() && s != crate::diff::changes::Severity::HotAdjacent
}

/// Whether flagged object `c` was `__read_mostly` in OLD and is not in NEW.
fn lost_read_mostly(old: &Image<'_>, new: &Image<'_>, c: &PlacementChange<'_>) -> bool {
    let find = |i: &Image<'_>, place: u64| {
        i.symbols
            .iter()
            .find(|s| {
                s.kind == SymbolKind::Object
                    && s.space == c.space
                    && s.place == place
                    && c.name.is(&s.qualified_name())
            })
            .map(|s| i.in_read_mostly(s))
    };
    find(old, c.place.old) == Some(true) && find(new, c.place.new) == Some(false)
}

/// `__read_mostly` put back on `name`, predicted when the link model finds the
/// read-mostly data, else said to be not predicted.
fn read_mostly_fix(new: &Base<'_, '_>, name: &str, c: &PlacementChange<'_>, asked: bool) -> Fix {
    let change = Change::ReadMostly {
        name: name.to_string(),
    };
    let sym = new
        .symbols
        .iter()
        .find(|s| s.kind == SymbolKind::Object && c.name.is(&s.qualified_name()));
    let declaration = sym.map_or_else(
        || format!("TYPE {name} __read_mostly;{KEEP_INIT}"),
        |s| read_mostly_declaration(new, s),
    );
    let mut fix = Fix {
        change: format!("--read-mostly {name}"),
        declaration,
        restores: false,
        section_bytes: 0,
        shifted: 0,
        max_shift: 0,
        lines: 0,
        flags_after: 0,
        not_predicted: None,
    };
    let Some(sym) = sym else {
        fix.not_predicted = Some(format!("{name} is not in the build"));
        return fix;
    };
    let p = match new.predict(std::slice::from_ref(&change)) {
        Ok(p) => p,
        Err(e) => {
            fix.not_predicted = Some(e.to_string());
            return fix;
        }
    };
    let after = new.judge(&p.image);
    fix.restores = object_after(&after, name, asked).1;
    fix.lines = lines_of(&p.image, name);
    let (moved, most) = new.shifts(
        &p.image,
        (SymbolKind::Object, sym.space, sym.section),
        &[sym.name],
    );
    fix.shifted = moved;
    fix.max_shift = most;
    fix.section_bytes = section_end(&p.image, SymbolKind::Object, sym.space, sym.section) as i64
        - section_end(new, SymbolKind::Object, sym.space, sym.section) as i64;
    fix.flags_after = after.flagged;
    fix
}

/// What a printed declaration leaves to the reader: the definition's initializer, which
/// the build does not record (issue 33: it was an unexplained `...;`).
const KEEP_INIT: &str = "  /* with its initializer, if it has one */";

/// The declaration of `sym` with `__read_mostly`, as C.
fn read_mostly_declaration(image: &Image<'_>, sym: &crate::model::Symbol<'_>) -> String {
    let c_type = image.variable_for(sym).map_or("TYPE", |v| v.type_name());
    let bare = sym.name.split('.').next().unwrap_or(sym.name);
    let storage = if sym.binding == Binding::Local {
        "static "
    } else {
        ""
    };
    let (head, dims) = match c_type.find('[') {
        Some(i) => (c_type[..i].trim_end(), &c_type[i..]),
        None => (c_type, ""),
    };
    format!("{storage}{head} {bare}{dims} __read_mostly;{KEEP_INIT}")
}

/// Changes spelled as `whatif` arguments, one after another.
pub(crate) fn changes_args(changes: &[Change]) -> String {
    changes
        .iter()
        .map(change_args)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The variables of `image` whose type is struct `name` (or an array of it): its
/// instances, as a fix's cost counts them.
pub(crate) fn instances_of(image: &Image<'_>, name: &str) -> usize {
    image
        .variables
        .iter()
        .filter(|v| image.struct_name(v) == Some(name))
        .count()
}

/// The change spelled as `whatif` arguments (`Change::to_args`).
pub(crate) fn change_args(c: &Change) -> String {
    c.to_args()
}

/// The declaration of `sym` with the alignment asked for, as C.
pub(crate) fn declaration(image: &Image<'_>, sym: &crate::model::Symbol<'_>) -> String {
    let c_type = image
        .variable_for(sym)
        .map_or("TYPE", |v| v.type_name())
        .to_string();
    let bare = sym.name.split('.').next().unwrap_or(sym.name);
    let storage = if sym.binding == Binding::Local {
        "static "
    } else {
        ""
    };
    match sym.space {
        Space::Percpu if sym.binding == Binding::Local => {
            format!("static DEFINE_PER_CPU_ALIGNED({c_type}, {bare});")
        }
        // A global one is declared in a header too, whose section wins.
        Space::Percpu => format!(
            "DEFINE_PER_CPU_ALIGNED({c_type}, {bare});  /* and in its header: DECLARE_PER_CPU_ALIGNED({c_type}, {bare}); */"
        ),
        Space::Global => {
            // `int[4]` is declared `int name[4]`.
            let (head, dims) = match c_type.find('[') {
                Some(i) => (c_type[..i].trim_end(), &c_type[i..]),
                None => (c_type.as_str(), ""),
            };
            format!("{storage}{head} {bare}{dims} ____cacheline_aligned_in_smp;{KEEP_INIT}")
        }
    }
}

/// A `check` rule that keeps the fix: the object never again shares a line with the
/// neighbours it gained, and, when the fix aligns it, it stays aligned.
fn rule_for(name: &str, neighbours: &[String], best: Option<&Fix>, line: u64) -> String {
    let mut rule = format!("[symbol.\"{name}\"]\n");
    if !neighbours.is_empty() {
        let list: Vec<String> = neighbours.iter().map(|n| format!("\"{n}\"")).collect();
        rule += &format!("not_with = [{}]\n", list.join(", "));
    }
    if best.is_some_and(|f| {
        f.change.contains(&format!("--symbol {name} "))
            || f.change.ends_with(&format!("--percpu-aligned {name}"))
    }) {
        rule += &format!("aligned = {line}\n");
    }
    rule += "why = \"a hot object kept off its written neighbours' lines (layout-diff suggest)\"\n";
    rule
}

/// The place just past the last symbol of `kind` (objects or functions) of `section`
/// in `space`.
fn section_end(image: &Image<'_>, kind: SymbolKind, space: Space, section: &str) -> u64 {
    image
        .symbols
        .iter()
        .filter(|s| s.kind == kind && s.space == space && s.section == section)
        .map(|s| s.place_end())
        .max()
        .unwrap_or(0)
}

/// How many symbols of one kind in `section` (`where_`: kind, space, section) other
/// than `changed` move from `before` to `after`, and the largest move (matched by name
/// and order).
fn shifts(
    before: &Image<'_>,
    after: &Image<'_>,
    where_: (SymbolKind, Space, &str),
    changed: &[&str],
) -> (usize, i64) {
    let (a, b) = (
        spellings(before, where_, changed),
        spellings(after, where_, changed),
    );
    count_shifts(&sorted(&a), &sorted(&b))
}

/// The qualified names and places of `image`'s symbols of kind, space and section
/// `where_`, but those named in `changed`, in symbol order.
fn spellings(
    image: &Image<'_>,
    (kind, space, section): (SymbolKind, Space, &str),
    changed: &[&str],
) -> Vec<(String, u64)> {
    image
        .symbols
        .iter()
        .filter(|s| {
            s.kind == kind && s.space == space && s.section == section && !changed.contains(&s.name)
        })
        .map(|s| (s.qualified_name(), s.place))
        .collect()
}

/// `spellings` borrowed and sorted by name, then place.
fn sorted(v: &[(String, u64)]) -> Vec<(&str, u64)> {
    let mut out: Vec<(&str, u64)> = v.iter().map(|(q, p)| (q.as_str(), *p)).collect();
    out.sort_unstable();
    out
}

/// `shifts` of two lists of (qualified name, place), each sorted: the moves of equal
/// names counted in order.
fn count_shifts(a: &[(&str, u64)], b: &[(&str, u64)]) -> (usize, i64) {
    let mut count = 0;
    let mut most = 0i64;
    for (x, y) in a.iter().zip(b) {
        if x.0 == y.0 && x.1 != y.1 {
            count += 1;
            let d = y.1 as i64 - x.1 as i64;
            if d.abs() > most.abs() {
                most = d;
            }
        }
    }
    (count, most)
}

fn lines_of(image: &Image<'_>, name: &str) -> u64 {
    image
        .symbols
        .iter()
        .find(|s| s.kind == SymbolKind::Object && s.answers_to(name))
        .map_or(0, |s| {
            crate::layout::place(s.place, s.size, image.line_size).lines
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_keeps_the_neighbours_off_and_the_alignment_when_the_fix_aligns_it() {
        let fix = Fix {
            change: "--symbol root_user --align 64".into(),
            declaration: String::new(),
            restores: true,
            section_bytes: 32,
            shifted: 0,
            max_shift: 0,
            lines: 3,
            flags_after: 0,
            not_predicted: None,
        };
        assert_eq!(
            rule_for("root_user", &["init_user_ns".into()], Some(&fix), 64),
            "[symbol.\"root_user\"]\nnot_with = [\"init_user_ns\"]\naligned = 64\n\
             why = \"a hot object kept off its written neighbours' lines (layout-diff suggest)\"\n"
        );
        let other = Fix {
            change: "--symbol init_user_ns --align 64".into(),
            ..fix
        };
        assert_eq!(
            rule_for("root_user", &["init_user_ns".into()], Some(&other), 64),
            "[symbol.\"root_user\"]\nnot_with = [\"init_user_ns\"]\n\
             why = \"a hot object kept off its written neighbours' lines (layout-diff suggest)\"\n"
        );
    }
}
