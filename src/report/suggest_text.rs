//! `suggest` as text: per flagged object, its fixes cheapest first, each with what it
//! restores and costs, the C to paste and the rule that keeps it.

use std::fmt::Write;
use std::path::Path;

use crate::suggest::Suggestions;

pub fn render(found: &Suggestions, old: &Path, new: &Path) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "layout-diff suggest  {}  ->  {}",
        old.display(),
        new.display()
    );
    if found.other_flags > 0 {
        let _ = writeln!(
            out,
            "\n{} flagged change{} of other kinds (a struct's hot member, a cache-line group, a function's phase): no fix proposed for those yet",
            found.other_flags,
            if found.other_flags == 1 { "" } else { "s" }
        );
    }
    if found.suggestions.is_empty() {
        out += "\nno hot object is flagged for its neighbours or alignment: nothing to fix\n";
        return out;
    }
    for s in &found.suggestions {
        let _ = writeln!(
            out,
            "\n{} ({}{})  flagged: {}",
            s.object,
            s.type_name.as_deref().unwrap_or("untyped"),
            match s.space {
                crate::model::Space::Percpu => ", per-CPU",
                crate::model::Space::Global => "",
            },
            s.flag
        );
        if !s.neighbours.is_empty() {
            let what = if s.flag.starts_with("asked") {
                "new neighbours"
            } else {
                "new written neighbours"
            };
            let _ = writeln!(out, "  {what}: {}", s.neighbours.join(", "));
        }
        if s.fixes.is_empty() {
            out += "  no fix found: neither it nor its neighbours can be aligned here\n";
            continue;
        }
        for (i, f) in s.fixes.iter().enumerate() {
            let _ = writeln!(
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
            );
            for d in f.declaration.lines() {
                let _ = writeln!(out, "       {d}");
            }
        }
        out += "  check rule:\n";
        for l in s.rule.lines() {
            let _ = writeln!(out, "    {l}");
        }
    }
    out
}
