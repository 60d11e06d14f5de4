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
            "\n{} flagged change{} of other kinds (a struct's hot member, a cache-line group, a function's phase): no fix proposed for those yet",
            found.other_flags,
            if found.other_flags == 1 { "" } else { "s" }
        )?;
    }
    if found.suggestions.is_empty() {
        return out.write_str(
            "\nno hot object is flagged for its neighbours or alignment: nothing to fix\n",
        );
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
