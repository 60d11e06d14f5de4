//! `suggest` as text: the report's sentences (`suggest_doc`) laid out as indented
//! lines, fixes numbered, code and rules indented under them.

use std::fmt::{self, Write};
use std::path::Path;

use super::suggest_doc::{self, Doc};
use layout_diff_core::suggest::Suggestions;

/// Writes the suggestions of `suggest OLD NEW` as text.
pub fn render(out: &mut impl Write, found: &Suggestions, old: &Path, new: &Path) -> fmt::Result {
    write_doc(out, &suggest_doc::of_pair(found, old, new))
}

/// Writes `suggest IMAGE --rules FILE` (or `--hot FILE`) as text.
pub fn render_image(
    out: &mut impl Write,
    found: &Suggestions,
    image: &Path,
    from: &str,
) -> fmt::Result {
    write_doc(out, &suggest_doc::of_image(found, image, from))
}

fn write_doc(out: &mut impl Write, doc: &Doc) -> fmt::Result {
    writeln!(out, "{}", doc.title)?;
    if let Some(note) = &doc.note {
        writeln!(out, "\n{note}")?;
    }
    for item in &doc.items {
        writeln!(out, "\n{}", item.heading)?;
        for f in &item.facts {
            writeln!(out, "  {f}")?;
        }
        if let Some(none) = &item.none {
            writeln!(out, "  {none}")?;
        }
        for (i, f) in item.fixes.iter().enumerate() {
            writeln!(out, "  {}. {}", i + 1, f.summary)?;
            for e in &f.extra {
                writeln!(out, "       {e}")?;
            }
            indented(out, "       ", &f.code)?;
        }
        if let Some(rule) = &item.rule {
            out.write_str("  check rule:\n")?;
            indented(out, "    ", rule)?;
        }
    }
    if let Some(c) = &doc.closing {
        writeln!(out, "\n{c}")?;
    }
    Ok(())
}

/// Each line of `text` after `indent`.
fn indented(out: &mut impl Write, indent: &str, text: &str) -> fmt::Result {
    for l in text.lines() {
        writeln!(out, "{indent}{l}")?;
    }
    Ok(())
}
