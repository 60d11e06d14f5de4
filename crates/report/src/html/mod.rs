//! HTML renderers: one self-contained page (CSS and script inline, nothing fetched) per
//! diff, `show --struct`/`--symbol`, `check` or `suggest`, drawing the same report as the text with
//! cacheline maps. They compute nothing; the blocks come from the report's values.

mod check;
mod diff;
pub mod map;
mod show;
mod suggest;

pub use check::render as check;
pub use diff::render as diff;
pub use show::render as show;
pub use suggest::render as suggest;

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

/// Which marks a page's maps use, so that its legend lists those and no others.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Keys {
    /// A map shows the object it is about.
    pub focus: bool,
    /// A map shows other items.
    pub item: bool,
    /// A map shows write-hot items.
    pub hot: bool,
    /// A map shows added items.
    pub added: bool,
    /// A map shows removed items.
    pub removed: bool,
    /// A map shows changed items.
    pub changed: bool,
    /// A map shows holes or padding.
    pub hole: bool,
    /// A row stands for a run of lines.
    pub runs: bool,
}

impl Keys {
    /// Every mark a diff can draw.
    pub const ALL: Keys = Keys {
        focus: true,
        item: true,
        hot: true,
        added: true,
        removed: true,
        changed: true,
        hole: true,
        runs: true,
    };

    /// Adds the marks of the blocks of `map`.
    pub fn add(&mut self, map: &map::Map) {
        for b in &map.blocks {
            match b.kind {
                map::Kind::Item => {
                    self.focus |= b.focus;
                    self.item |= !b.focus && b.mark == map::Mark::None;
                }
                map::Kind::Hole | map::Kind::Padding => self.hole = true,
            }
            self.hot |= b.hot;
            self.added |= b.mark == map::Mark::Added;
            self.removed |= b.mark == map::Mark::Removed;
            self.changed |= b.mark == map::Mark::Changed;
        }
        self.runs |= map.has_runs();
    }
}

/// The key to the map's marks, which are drawn and spelled (never colour alone): the
/// marks in `keys`, the object the map is about called `focus`, and a plain block
/// `item` when that is given (pages where a plain block means more than "a member").
fn legend(keys: Keys, focus: &str, item: Option<&str>, line_size: u64) -> String {
    let mut s = String::from("<p class=\"legend\">");
    let mut key = |on: bool, class: &str, label: &str, what: &str| {
        if on {
            s.push_str(&format!(
                "<span><span class=\"cell item{class}\">{label}</span> {what}</span>"
            ));
        }
    };
    key(keys.focus, " focus", "name", focus);
    if let Some(what) = item {
        key(keys.item, "", "name", what);
    }
    key(keys.hot, " hot", "W name", "write-hot (hatched, W)");
    key(keys.added, " added", "+name", "added");
    key(keys.removed, " removed", "-name", "removed");
    key(keys.changed, " changed", "~name", "changed");
    if keys.hole {
        s.push_str("<span><span class=\"cell hole\">hole</span> hole or padding</span>");
    }
    s.push_str(if keys.runs {
        "<span>rows: one cache line each, or (\u{22ee}) a run of lines that hold only the middle of one block, or nothing</span>"
    } else {
        "<span>rows: one cache line each</span>"
    });
    s.push_str(&format!(
        "<span>a solid rule starts a {}-byte pair (\u{250c} \u{2514})</span>\
         <span>hover or focus (Tab) a block for its name, type, offset and size</span></p>\n",
        2 * line_size
    ));
    s
}

/// Lines of text as a preformatted block.
fn pre(out: &mut impl Write, lines: &[String]) -> fmt::Result {
    out.write_str("<pre>")?;
    for l in lines {
        writeln!(out, "{}", esc(l))?;
    }
    out.write_str("</pre>")
}
