//! `suggest` as Markdown, for a review comment or a commit message draft: the
//! report's sentences (`suggest_doc`) as a heading per flagged thing, its facts as a
//! list, its fixes numbered with the C to paste in a code block, and the rule in a
//! TOML block.

use std::fmt::{self, Write};
use std::path::Path;

use super::suggest_doc::{self, Doc};
use layout_diff_core::suggest::Suggestions;

/// Writes the suggestions of `suggest OLD NEW` as Markdown.
pub fn render(out: &mut impl Write, found: &Suggestions, old: &Path, new: &Path) -> fmt::Result {
    write_doc(out, &suggest_doc::of_pair(found, old, new))
}

/// Writes `suggest IMAGE --rules FILE` (or `--hot FILE`) as Markdown.
pub fn render_image(
    out: &mut impl Write,
    found: &Suggestions,
    image: &Path,
    from: &str,
) -> fmt::Result {
    write_doc(out, &suggest_doc::of_image(found, image, from))
}

fn write_doc(out: &mut impl Write, doc: &Doc) -> fmt::Result {
    writeln!(out, "# {}", inline(&doc.title))?;
    if let Some(note) = &doc.note {
        writeln!(out, "\n{}", inline(note))?;
    }
    for item in &doc.items {
        writeln!(out, "\n## {}", inline(&item.heading))?;
        if !item.facts.is_empty() {
            out.write_str("\n")?;
            for f in &item.facts {
                writeln!(out, "- {}", inline(f))?;
            }
        }
        if let Some(none) = &item.none {
            writeln!(out, "\n{}", inline(none))?;
        }
        if !item.fixes.is_empty() {
            out.write_str("\n")?;
        }
        for (i, f) in item.fixes.iter().enumerate() {
            if i > 0 {
                out.write_str("\n")?;
            }
            writeln!(out, "{}. {}", i + 1, inline(&f.summary))?;
            for e in &f.extra {
                writeln!(out, "\n   {}", inline(e))?;
            }
            fenced(out, "   ", "c", &f.code)?;
        }
        if let Some(rule) = &item.rule {
            out.write_str("\nCheck rule:\n")?;
            fenced(out, "", "toml", rule)?;
        }
    }
    if let Some(c) = &doc.closing {
        writeln!(out, "\n{}", inline(c))?;
    }
    Ok(())
}

/// A code block of `text`, indented under a list item by `indent`.
fn fenced(out: &mut impl Write, indent: &str, lang: &str, text: &str) -> fmt::Result {
    // A fence longer than any run of backticks inside.
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    writeln!(out, "\n{indent}{fence}{lang}")?;
    for l in text.lines() {
        writeln!(out, "{indent}{l}")?;
    }
    writeln!(out, "{indent}{fence}")
}

/// Text for a Markdown paragraph: the characters Markdown would read as markup
/// escaped (`*`, `[`, `]`, `<`, `|`, backslash and backticks, and underscores at
/// either end of a word: `__lock`, not `mm_struct`, which stays as the kernel spells
/// it).
fn inline(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let word = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(|c| c.is_alphanumeric())
    };
    let mut out = String::with_capacity(text.len());
    for (i, &ch) in chars.iter().enumerate() {
        let escape = match ch {
            '\\' | '`' | '*' | '[' | ']' | '<' | '|' => true,
            '_' => {
                // The run of underscores this one is in: escaped unless letters or
                // digits stand on both sides of it.
                let start = chars[..i]
                    .iter()
                    .rposition(|&c| c != '_')
                    .map_or(0, |p| p + 1);
                let end = chars[i..]
                    .iter()
                    .position(|&c| c != '_')
                    .map_or(chars.len(), |p| i + p);
                !(word(start.checked_sub(1)) && word(Some(end)))
            }
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped_but_names_inside_words_stay() {
        assert_eq!(
            inline("struct mm_struct: __lock *x* [a] <b> `c` x_ d|e -> f"),
            "struct mm_struct: \\_\\_lock \\*x\\* \\[a\\] \\<b> \\`c\\` x\\_ d\\|e -> f"
        );
        assert_eq!(
            inline("__cacheline_group_begin__sock_read_tx"),
            "\\_\\_cacheline_group_begin__sock_read_tx"
        );
    }
}
