//! HTML of `layout-diff suggest`: one page with a section per flagged thing (or
//! failing rule), its facts, its fixes numbered with the C to paste, and the rule that
//! keeps the best one, from the same sentences as the text (`suggest_doc`).

use std::fmt::{self, Write};

use super::{close, esc, open};
use crate::suggest_doc::Doc;

/// Writes a `suggest` report as one HTML page.
pub fn render(out: &mut impl Write, doc: &Doc) -> fmt::Result {
    open(out, &doc.title)?;
    writeln!(out, "<header><h1>{}</h1></header>", esc(&doc.title))?;
    if let Some(note) = &doc.note {
        writeln!(out, "<p class=\"note\">{}</p>", esc(note))?;
    }
    for item in &doc.items {
        writeln!(
            out,
            "<section class=\"suggestion\"><h2>{}</h2>",
            esc(&item.heading)
        )?;
        if !item.facts.is_empty() {
            out.write_str("<ul>")?;
            for f in &item.facts {
                write!(out, "<li>{}</li>", esc(f))?;
            }
            out.write_str("</ul>\n")?;
        }
        if let Some(none) = &item.none {
            writeln!(out, "<p class=\"note\">{}</p>", esc(none))?;
        }
        if !item.fixes.is_empty() {
            out.write_str("<ol class=\"fixes\">")?;
            for f in &item.fixes {
                write!(out, "<li><p>{}</p>", esc(&f.summary))?;
                for e in &f.extra {
                    write!(out, "<p class=\"note\">{}</p>", esc(e))?;
                }
                write!(out, "<pre class=\"code\">{}</pre></li>", esc(&f.code))?;
            }
            out.write_str("</ol>\n")?;
        }
        if let Some(rule) = &item.rule {
            write!(
                out,
                "<p>check rule:</p><pre class=\"code\">{}</pre>",
                esc(rule.trim_end())
            )?;
        }
        out.write_str("</section>\n")?;
    }
    if let Some(c) = &doc.closing {
        writeln!(out, "<p class=\"closing\">{}</p>", esc(c))?;
    }
    close(out)
}
