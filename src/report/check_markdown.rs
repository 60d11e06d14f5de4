//! Markdown report of `layout-diff check`, for a review comment: a table of every
//! rule with PASS/FAIL and the value measured, then the failures with their details.

use std::fmt::Write;

use super::check_text::{closing, details, measured, title};
use crate::check::eval::CheckReport;

pub fn render(r: &CheckReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### {}\n", title(r).replace('`', ""));
    let _ = writeln!(out, "| | rule | measured |\n|---|---|---|");
    for o in &r.outcomes {
        let target = o.target.as_deref().unwrap_or(&o.pattern);
        let target = if o.table == crate::check::eval::Table::Group {
            format!("{target:?}")
        } else {
            target.to_string()
        };
        let _ = writeln!(
            out,
            "| {} | `[{}.{target}] {} = {}` | {} |",
            if o.pass { "PASS" } else { "**FAIL**" },
            super::check_text::table(o.table),
            o.key,
            o.expected.replace('|', "\\|"),
            measured(o).replace('|', "\\|")
        );
    }
    let failed: Vec<_> = r.outcomes.iter().filter(|o| !o.pass).collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\n**Failures**\n\n```");
        for o in failed {
            let _ = writeln!(out, "{}", super::check_text::rule_line(o));
            for d in details(o) {
                let _ = writeln!(out, "    {d}");
            }
        }
        let _ = writeln!(out, "```");
    }
    let _ = writeln!(out, "\n{}", closing(r));
    out
}
