//! HTML renderers: one self-contained page (CSS and script inline, nothing fetched) per
//! diff, `show --struct`/`--symbol` or `check`, drawing the same report as the text with
//! cacheline maps. They compute nothing; the blocks come from the report's values.

mod check;
mod diff;
pub mod map;
mod show;

pub use check::render as check;
pub use diff::render as diff;
pub use show::render as show;

use std::fmt::{self, Write};

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// What every page starts with: title, style, the early error recorder.
fn open(out: &mut impl Write, title: &str) -> fmt::Result {
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><script>window.addEventListener('error',function(e){{(window.layoutDiffErrors=window.layoutDiffErrors||[]).push(e.message)}});</script>\
         <style>{CSS}</style></head><body>\n<pre id=\"js-errors\"></pre>\n",
        esc(title)
    )
}

/// What every page ends with: the details panel and the script.
fn close(out: &mut impl Write) -> fmt::Result {
    write!(
        out,
        "\n<div id=\"inspector\" role=\"status\" aria-live=\"polite\"></div>\n<script>{JS}</script>\n</body></html>\n"
    )
}

/// The key to the map's marks, which are drawn and spelled (never colour alone).
fn legend() -> &'static str {
    "<p class=\"legend\">\
     <span><span class=\"cell item focus\">name</span> the object shown</span>\
     <span><span class=\"cell item hot\">W name</span> write-hot (hatched, W)</span>\
     <span><span class=\"cell item added\">+name</span> added</span>\
     <span><span class=\"cell item removed\">-name</span> removed</span>\
     <span><span class=\"cell item changed\">~name</span> changed</span>\
     <span><span class=\"cell hole\">hole</span> hole or padding</span>\
     <span>rows: one cache line each; a solid rule starts a 128-byte pair (\u{250c} \u{2514})</span>\
     <span>hover or focus (Tab) a block for its name, type, offset and size</span></p>\n"
}

/// Lines of text as a preformatted block.
fn pre(out: &mut impl Write, lines: &[String]) -> fmt::Result {
    out.write_str("<pre>")?;
    for l in lines {
        writeln!(out, "{}", esc(l))?;
    }
    out.write_str("</pre>")
}
