//! Fixes for flagged objects: for each hot object the diff flags, the changes that
//! would give it back its line facts (the object or its new written neighbour aligned
//! to a line, with `____cacheline_aligned_in_smp` or `DEFINE_PER_CPU_ALIGNED`), each
//! checked by predicting the build it makes and diffing that against OLD again, with
//! its cost in bytes and lines. The cheapest that clears the flag comes first.

pub mod members;

use serde::Serialize;

pub use members::{MemberFix, MemberSuggestion};

use crate::diff::{DiffOptions, Root, Severity, diff};
use crate::model::{Binding, Image, Space, SymbolKind};
use crate::whatif::{Change, predict};

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
    pub max_shift: i64,
    /// Lines the flagged object covers after the change.
    pub lines: u64,
    /// Flags in the whole predicted diff against OLD (the flag itself included when
    /// not cleared): a fix that moves the problem elsewhere shows here.
    pub flags_after: usize,
}

/// The fixes for one flagged object, cheapest restoring first.
#[derive(Debug, Clone, Serialize)]
pub struct Suggestion {
    pub object: String,
    pub space: Space,
    pub type_name: Option<String>,
    /// Why it is flagged: the category and the new written neighbours.
    pub flag: String,
    pub neighbours: Vec<String>,
    pub fixes: Vec<Fix>,
    /// A `check` rule that keeps the best fix in place.
    pub rule: String,
}

/// The fixes found, and the flags they do not cover.
#[derive(Debug, Clone, Serialize)]
pub struct Suggestions {
    pub suggestions: Vec<Suggestion>,
    /// Structs flagged for a hot member that changed line, with their fixes.
    pub members: Vec<MemberSuggestion>,
    /// Flagged changes of other kinds (a group, a function's phase), for which no fix
    /// is proposed yet.
    pub other_flags: usize,
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
) -> Result<Suggestions, String> {
    let report = diff(old, new, options);
    let object_flags = report
        .data
        .iter()
        .chain(&report.percpu)
        .filter(|c| matches!(c.severity, Severity::HotNeighbour | Severity::LostAlignment))
        .count();
    let members = members::suggest_members(old, new, options, &report.structs);
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
        .filter(|s| s.severity == Severity::HotMember)
        .count()
        + report
            .data
            .iter()
            .chain(&report.percpu)
            .filter(|c| c.severity == Severity::HotMember && fixed_in_struct(c.type_name))
            .count();
    let other_flags = report
        .flagged
        .saturating_sub(object_flags)
        .saturating_sub(member_flags);
    let is_asked = |name: &str| asked.iter().any(|a| a == name);
    let flagged: Vec<_> = report
        .data
        .iter()
        .chain(&report.percpu)
        .filter(|c| {
            matches!(c.severity, Severity::HotNeighbour | Severity::LostAlignment)
                || (is_asked(&c.name.to_string()) && c.sharing_grew)
        })
        .take(MAX_FLAGGED)
        .collect();
    let mut out = Vec::new();
    for c in flagged {
        let name = c.name.to_string();
        // The neighbours it gained that are written; for an object asked for by name,
        // every neighbour it gained.
        let gained: Vec<String> = if c.written_neighbours.is_empty() {
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
        };
        let neighbours = gained;
        // Candidates, each a set aligned together: the object, each new written
        // neighbour, and the objects whose growth shifted it (its root cause: the
        // resized instances of a grown struct, as mces_seen and injectm of struct mce).
        let mut groups: Vec<Vec<String>> = vec![vec![name.clone()]];
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
            grown.retain(|g| {
                new.symbols
                    .iter()
                    .any(|s| s.space == c.space && s.any_name(|n| n == g))
            });
            if !grown.is_empty() && !groups.contains(&grown) {
                groups.push(grown);
            }
        }
        let mut fixes = Vec::new();
        for group in &groups {
            let syms: Vec<&crate::model::Symbol<'d>> = group
                .iter()
                .filter_map(|t| {
                    new.symbols
                        .iter()
                        .find(|s| s.kind == SymbolKind::Object && s.any_name(|n| n == t))
                })
                .collect();
            if syms.len() != group.len() {
                continue;
            }
            let changes: Vec<Change> = group
                .iter()
                .zip(&syms)
                .map(|(t, sym)| match sym.space {
                    Space::Global => Change::SymbolAlign {
                        name: t.clone(),
                        align: new.line_size,
                    },
                    Space::Percpu => Change::PercpuAligned { name: t.clone() },
                })
                .collect();
            let Ok(p) = predict(new, &changes, &[]) else {
                continue;
            };
            let sym = syms[0];
            let names: Vec<&str> = syms.iter().map(|s| s.name).collect();
            let shifted = shifts(new, &p.image, sym.space, sym.section, &names);
            let after = diff(old, &p.image, options);
            let still = after
                .data
                .iter()
                .chain(&after.percpu)
                .find(|a| a.name.to_string() == name);
            let restores =
                still.is_none_or(|a| !(a.severity.flagged() || is_asked(&name) && a.sharing_grew));
            let lines = still.map_or_else(
                || lines_of(&p.image, &name),
                |a| crate::layout::place(a.place.new, a.size.new, new.line_size).lines,
            );
            fixes.push(Fix {
                change: changes
                    .iter()
                    .map(change_args)
                    .collect::<Vec<_>>()
                    .join(" "),
                declaration: syms
                    .iter()
                    .map(|s| declaration(new, s))
                    .collect::<Vec<_>>()
                    .join("\n"),
                restores,
                section_bytes: section_end(&p.image, sym.space, sym.section) as i64
                    - section_end(new, sym.space, sym.section) as i64,
                shifted: shifted.0,
                max_shift: shifted.1,
                lines,
                flags_after: after.flagged,
            });
        }
        fixes.sort_by_key(|f| (!f.restores, f.section_bytes, f.shifted, f.flags_after));
        let rule = rule_for(&name, &neighbours, fixes.first(), new.line_size);
        out.push(Suggestion {
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
        });
    }
    Ok(Suggestions {
        suggestions: out,
        members,
        other_flags,
    })
}

/// The change spelled as `whatif` arguments.
fn change_args(c: &Change) -> String {
    match c {
        Change::SymbolAlign { name, align } => format!("--symbol {name} --align {align}"),
        Change::PercpuAligned { name } => format!("--percpu-aligned {name}"),
        other => other.to_string(),
    }
}

/// The declaration of `sym` with the alignment asked for, as C.
fn declaration(image: &Image<'_>, sym: &crate::model::Symbol<'_>) -> String {
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
            format!("{storage}{head} {bare}{dims} ____cacheline_aligned_in_smp ...;")
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

/// The place just past the last object of `section` in `space`.
fn section_end(image: &Image<'_>, space: Space, section: &str) -> u64 {
    image
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Object && s.space == space && s.section == section)
        .map(|s| s.place_end())
        .max()
        .unwrap_or(0)
}

/// How many objects of `section` other than `changed` move from `before` to
/// `after`, and the largest move (objects matched by name and order).
fn shifts(
    before: &Image<'_>,
    after: &Image<'_>,
    space: Space,
    section: &str,
    changed: &[&str],
) -> (usize, i64) {
    let of = |i: &Image<'_>| {
        let mut v: Vec<(String, u64)> = i
            .symbols
            .iter()
            .filter(|s| {
                s.kind == SymbolKind::Object
                    && s.space == space
                    && s.section == section
                    && !changed.contains(&s.name)
            })
            .map(|s| (s.qualified_name(), s.place))
            .collect();
        v.sort();
        v
    };
    let (a, b) = (of(before), of(after));
    let mut count = 0;
    let mut most = 0i64;
    for (x, y) in a.iter().zip(&b) {
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
        .find(|s| s.kind == SymbolKind::Object && s.any_name(|n| n == name))
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
