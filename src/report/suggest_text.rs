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
            if found.other_flags == 1 { "" } else { "s" }
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
                if f.restores {
                    "restores"
                } else {
                    "does not restore"
                },
                f.section_bytes,
                f.shifted,
                if f.shifted == 1 { "" } else { "s" },
                f.max_shift,
                f.lines,
                if f.lines == 1 { "" } else { "s" },
                f.flags_after,
                if f.flags_after == 1 { "" } else { "s" },
            )?;
            for d in f.declaration.lines() {
                writeln!(out, "       {d}")?;
            }
        }
        out.write_str("  check rule:\n")?;
        for l in s.rule.lines() {
            writeln!(out, "    {l}")?;
        }
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
                if f.restores {
                    "restores"
                } else {
                    "does not restore"
                },
                m.member,
                f.line,
                f.instance_bytes,
                f.instances,
                if f.instances == 1 { "" } else { "s" },
                f.flags_after,
                if f.flags_after == 1 { "" } else { "s" },
            )?;
            for d in f.declaration.lines() {
                writeln!(out, "       {d}")?;
            }
        }
        if let Some(rule) = &m.rule {
            out.write_str("  check rule:\n")?;
            for l in rule.lines() {
                writeln!(out, "    {l}")?;
            }
        }
    }
    Ok(())
}
