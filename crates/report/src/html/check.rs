//! HTML of `layout-diff check`: every rule with PASS or FAIL and the value measured, and
//! under each failure the members or objects at fault drawn on their lines.

use std::fmt::{self, Write};

use super::map::{Block, Map};
use super::{Keys, close, esc, legend, open, pre};
use crate::check_text::{closing, details, rule_line, title};
use layout_diff_core::check::eval::{CheckReport, Outcome, Positions};
use layout_diff_core::model::Space;

/// Writes the check report as one HTML page.
pub fn render(out: &mut impl Write, r: &CheckReport) -> fmt::Result {
    open(out, &title(r))?;
    writeln!(
        out,
        "<header><h1>{}</h1><p class=\"meta\">line {} B ({})</p></header>",
        esc(&title(r)),
        r.image.line_size,
        r.image.line_size_from
    )?;
    // The verdict first as well as last: the exit status without scrolling.
    write!(
        out,
        "<p class=\"closing\" id=\"verdict\">{}</p>",
        esc(&closing(r))
    )?;
    let maps: Vec<Option<Map>> = r.outcomes.iter().map(offender_map).collect();
    let mut keys = Keys::default();
    maps.iter().flatten().for_each(|m| keys.add(m));
    if keys != Keys::default() {
        out.write_str(&legend(
            keys,
            "the object checked",
            Some("an object or member at fault"),
            r.image.line_size,
        ))?;
    }
    out.write_str("<table class=\"rules\"><tr><th>outcome</th><th>rule</th></tr>")?;
    for (o, map) in r.outcomes.iter().zip(&maps) {
        write!(
            out,
            "<tr class=\"outcome\" data-pass=\"{}\"><td class=\"{}\">{}</td><td><details class=\"item\"{}><summary class=\"item\">{}</summary>",
            o.pass,
            if o.pass { "pass" } else { "fail" },
            if o.pass { "PASS" } else { "FAIL" },
            if o.pass { "" } else { " open" },
            esc(&rule_line(o)),
        )?;
        pre(out, &details(o))?;
        if let Some(m) = map {
            m.html(out)?;
        }
        writeln!(out, "</details></td></tr>")?;
    }
    write!(
        out,
        "</table>\n<p class=\"closing\">{}</p>",
        esc(&closing(r))
    )?;
    close(out)
}

/// What the map shows: the objects or members at fault (not the object checked, drawn
/// bold beside them), or the object checked alone when nothing else is at fault.
fn caption(o: &Outcome) -> String {
    let checked = o.target.as_deref().unwrap_or(&o.pattern);
    let mut at_fault: Vec<&str> = Vec::new();
    for f in o.offenders.iter().filter(|f| !f.lines.is_empty()) {
        if !at_fault.contains(&f.name.as_str()) {
            at_fault.push(&f.name);
        }
    }
    let names = crate::diff_lines::names(&at_fault);
    match (at_fault.is_empty(), o.subject.is_some()) {
        (true, _) => format!("{checked}: where it is"),
        (false, true) => format!("at fault: {names} (beside {checked}, the object checked)"),
        (false, false) => format!("at fault in {checked}: {names}"),
    }
}

/// The offenders on the lines where they are, with the object checked (the map's
/// focus) where it shares those lines; with no offender on a line, the first line of
/// the object checked (where a function starts). `None` when there is neither.
fn offender_map(o: &Outcome) -> Option<Map> {
    let lines: Vec<u64> = o
        .offenders
        .iter()
        .flat_map(|f| f.lines.iter().copied())
        .collect();
    let (first, last) = match (lines.iter().min(), lines.iter().max(), &o.subject) {
        (Some(&a), Some(&b), _) => (a, b),
        (_, _, Some(s)) => (s.offset, s.offset),
        _ => return None,
    };
    let mut blocks: Vec<Block> = o
        .offenders
        .iter()
        .filter(|f| !f.lines.is_empty())
        .map(|f| Block::new(f.offset, f.size, f.name.clone(), "at fault"))
        .collect();
    if let Some(s) = &o.subject {
        let mut b = Block::new(s.offset, s.size, s.name.clone(), "the object checked");
        b.focus = true;
        blocks.push(b);
    }
    // In address order, as they are read and tabbed through.
    blocks.sort_by_key(|b| b.start);
    Some(Map {
        caption: caption(o),
        line_size: o.line_size,
        first_line: first / o.line_size,
        last_line: last / o.line_size,
        origin: 0,
        offsets: o.positions == Positions::StructOffset,
        space: if o.positions == Positions::PercpuOffset {
            Space::Percpu
        } else {
            Space::Global
        },
        blocks,
        bands: Vec::new(),
    })
}
