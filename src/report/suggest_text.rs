//! `suggest` as text: per flagged object, member, function or group (or, on one
//! build, per failing rule), its fixes cheapest first, each with what it restores and
//! costs, the C to paste and the rule that keeps it.

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
            "\n{} flagged change{} of other kinds (past the limit of items per run, or of a kind no fix is tried for): no fix proposed for those",
            found.other_flags,
            plural(found.other_flags)
        )?;
    }
    members(out, found)?;
    functions(out, found)?;
    groups(out, found)?;
    if found.suggestions.is_empty() {
        if found.members.is_empty() && found.functions.is_empty() && found.groups.is_empty() {
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
            if let Some(why) = &f.not_predicted {
                writeln!(out, "  {}. {}: not predicted ({why})", i + 1, f.change)?;
                indented(out, "       ", &f.declaration)?;
                continue;
            }
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

/// The functions flagged for their phase, with their fixes.
fn functions(out: &mut impl Write, found: &Suggestions) -> fmt::Result {
    for f in &found.functions {
        writeln!(
            out,
            "\nfunction {}{}: start mod line {:#04x} -> {:#04x} ({:#x} -> {:#x}), {} -> {} line{}",
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
        )?;
        if f.fixes.is_empty() {
            out.write_str("  no fix found\n")?;
        }
        for (i, x) in f.fixes.iter().enumerate() {
            writeln!(
                out,
                "  {}. {}: {}; start mod line {:#04x}, {} line{}; section end {:+} B, {} other function{} moved (at most {:+} B); {} flag{} in the predicted diff",
                i + 1,
                x.change,
                match (x.no_more_lines, x.shifted == 0 && x.section_bytes == 0) {
                    (true, true) =>
                        "keeps it where NEW has it: on a line start, covering no more lines than in OLD (OLD's mid-line start no alignment gives back)",
                    (true, false) =>
                        "starts it on a line, covering no more lines than in OLD (OLD's mid-line start no alignment gives back)",
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
            )?;
            indented(out, "       ", &x.declaration)?;
        }
        out.write_str("  check rule:\n")?;
        indented(out, "    ", &f.rule)?;
    }
    Ok(())
}

/// The cache-line groups flagged for their lines, with their fixes or their excess.
fn groups(out: &mut impl Write, found: &Suggestions) -> fmt::Result {
    for g in &found.groups {
        writeln!(
            out,
            "\nstruct {} group {}: {}+{} B, {} line{} -> {}+{} B, {} line{} (its size needs {})",
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
        )?;
        if !g.added_or_grown.is_empty() {
            writeln!(
                out,
                "  added or grown in it: {}",
                g.added_or_grown.join(", ")
            )?;
        }
        if let Some(over) = g.exceeds_by {
            writeln!(
                out,
                "  no fix: it is {over} B larger than its {} line{} can hold; a member has to leave it or shrink",
                g.lines_old,
                plural(g.lines_old)
            )?;
        } else if g.fixes.is_empty() {
            out.write_str("  no fix found\n")?;
        }
        for (i, f) in g.fixes.iter().enumerate() {
            writeln!(
                out,
                "  {}. {}: {}; {} line{}; {:+} B per instance ({} instance{}); {} flag{} in the predicted diff",
                i + 1,
                f.change,
                restores(f.restores),
                f.lines,
                plural(f.lines),
                f.instance_bytes,
                f.instances,
                plural(f.instances),
                f.flags_after,
                plural(f.flags_after),
            )?;
            indented(out, "       ", &f.declaration)?;
        }
        out.write_str("  check rule:\n")?;
        indented(out, "    ", &g.rule)?;
    }
    Ok(())
}

/// `suggest IMAGE --rules FILE` (or `--hot FILE`) as text: each failing rule and its
/// fixes.
pub fn render_image(
    out: &mut impl Write,
    found: &Suggestions,
    image: &Path,
    from: &str,
) -> fmt::Result {
    writeln!(out, "layout-diff suggest  {}  ({from})", image.display())?;
    if found.rules.is_empty() {
        out.write_str("\nno placement rule fails: nothing to fix\n")?;
        return Ok(());
    }
    for r in &found.rules {
        writeln!(
            out,
            "\nFAIL {} {}: {} = {}{}",
            table_name(r.table),
            r.target.as_deref().unwrap_or(&r.pattern),
            r.key,
            r.expected,
            if r.offenders.is_empty() {
                String::new()
            } else {
                format!(" (at fault: {})", r.offenders.join(", "))
            }
        )?;
        if let Some(note) = &r.note {
            writeln!(out, "  no fix: {note}")?;
        } else if r.fixes.is_empty() {
            out.write_str("  no fix found\n")?;
        }
        for (i, f) in r.fixes.iter().enumerate() {
            let cost = if let Some(n) = f.instances {
                format!(
                    "{:+} B per instance ({n} instance{})",
                    f.instance_bytes,
                    plural(n)
                )
            } else if f.instance_bytes != 0 || r.table == crate::check::eval::Table::Group {
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
            writeln!(
                out,
                "  {}. {}: {}; {cost}; {} rule{} failing after",
                i + 1,
                f.change,
                if f.passes { "passes" } else { "still fails" },
                f.failing_after,
                plural(f.failing_after),
            )?;
            if !f.moves_hot.is_empty() {
                writeln!(out, "       moves hot: {}", f.moves_hot.join(", "))?;
            }
            indented(out, "       ", &f.declaration)?;
        }
        if let Some(rule) = &r.rule {
            out.write_str("  check rule:\n")?;
            indented(out, "    ", rule)?;
        }
    }
    Ok(())
}

fn table_name(t: crate::check::eval::Table) -> &'static str {
    use crate::check::eval::Table;
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
