//! `suggest` as text: per flagged object, its fixes cheapest first, each with what it
//! restores and costs, the C to paste and the rule that keeps it.

use std::fmt::{self, Write};
use std::path::Path;

use crate::suggest::Suggestions;

/// Writes the suggestions as text.
pub fn render(out: &mut impl Write, found: &Suggestions, old: &Path, new: &Path) -> fmt::Result {
    writeln!(
        out,
        "layout-diff suggest  {}  ->  {}",
        old.display(),
        new.display()
    )?;
    if found.other_flags > 0 {
        writeln!(
            out,
            "\n{} flagged change{} of other kinds (a cache-line group, a function's phase): no fix proposed for those yet",
            found.other_flags,
            plural(found.other_flags)
        )?;
    }
    members(out, found)?;
    if found.suggestions.is_empty() {
        if found.members.is_empty() {
            out.write_str(
                "\nno hot object is flagged for its neighbours or alignment, and no struct for a hot member: nothing to fix\n",
            )?;
        }
        return Ok(());
    }
    for s in &found.suggestions {
        writeln!(
            out,
            "\n{} ({}{})  flagged: {}",
            s.object,
            s.type_name.as_deref().unwrap_or("untyped"),
            match s.space {
                crate::model::Space::Percpu => ", per-CPU",
                crate::model::Space::Global => "",
            },
            s.flag
        )?;
        if !s.neighbours.is_empty() {
            let what = if s.flag.starts_with("asked") {
                "new neighbours"
            } else {
                "new written neighbours"
            };
            writeln!(out, "  {what}: {}", s.neighbours.join(", "))?;
        }
        if s.fixes.is_empty() {
            out.write_str("  no fix found: neither it nor its neighbours can be aligned here\n")?;
            continue;
        }
        for (i, f) in s.fixes.iter().enumerate() {
            writeln!(
                out,
                "  {}. {}: {}; section end {:+} B, {} other object{} moved (at most {:+} B); {} line{}; {} flag{} in the predicted diff",
                i + 1,
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
            )?;
            indented(out, "       ", &f.declaration)?;
        }
        out.write_str("  check rule:\n")?;
        indented(out, "    ", &s.rule)?;
    }
    Ok(())
}

/// The structs flagged for a hot member on another line, with their fixes.
fn members(out: &mut impl Write, found: &Suggestions) -> fmt::Result {
    for m in &found.members {
        writeln!(
            out,
            "\nstruct {}: hot member {} moved from line {} to line {}{}",
            m.struct_name,
            m.member,
            m.line_old,
            m.line_new,
            m.evidence
                .as_deref()
                .map_or(String::new(), |e| format!(" ({e})"))
        )?;
        if !m.pushed_by.is_empty() {
            writeln!(out, "  pushed by: {}", m.pushed_by.join(", "))?;
        }
        if let Some(note) = &m.note {
            writeln!(out, "  note: {note}")?;
        }
        if m.fixes.is_empty() {
            out.write_str("  no fix found\n")?;
        }
        for (i, f) in m.fixes.iter().enumerate() {
            writeln!(
                out,
                "  {}. {}: {}; {} on line {}; {:+} B per instance ({} instance{}); {} flag{} in the predicted diff",
                i + 1,
                f.change,
                restores(f.restores),
                m.member,
                f.line,
                f.instance_bytes,
                f.instances,
                plural(f.instances),
                f.flags_after,
                plural(f.flags_after),
            )?;
            indented(out, "       ", &f.declaration)?;
        }
        if let Some(rule) = &m.rule {
            out.write_str("  check rule:\n")?;
            indented(out, "    ", rule)?;
        }
    }
    Ok(())
}

fn restores(yes: bool) -> &'static str {
    if yes { "restores" } else { "does not restore" }
}

fn plural<N: PartialEq + From<u8>>(n: N) -> &'static str {
    if n == N::from(1) { "" } else { "s" }
}

/// Each line of `text` after `indent`.
fn indented(out: &mut impl Write, indent: &str, text: &str) -> fmt::Result {
    for l in text.lines() {
        writeln!(out, "{indent}{l}")?;
    }
    Ok(())
}
