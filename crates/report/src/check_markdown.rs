//! Markdown report of `layout-diff check`, for a review comment: a table of every
//! rule with PASS/FAIL and the value measured, then the failures with their details.

use std::fmt::{self, Write};

use super::check_text::{closing, details, measured, title};
use layout_diff_core::check::eval::CheckReport;

/// Writes the check report as Markdown.
pub fn render(out: &mut impl Write, r: &CheckReport) -> fmt::Result {
    writeln!(out, "### {}\n", title(r).replace('`', ""))?;
    writeln!(out, "| | rule | measured |\n|---|---|---|")?;
    for o in &r.outcomes {
        let target = o.target.as_deref().unwrap_or(&o.pattern);
        let target = if o.table == layout_diff_core::check::eval::Table::Group {
            format!("{target:?}")
        } else {
            target.to_string()
        };
        writeln!(
            out,
            "| {} | `[{}.{target}] {} = {}` | {} |",
            if o.pass { "PASS" } else { "**FAIL**" },
            super::check_text::table(o.table),
            o.key,
            o.expected.replace('|', "\\|"),
            measured(o).replace('|', "\\|")
        )?;
    }
    let failed: Vec<_> = r.outcomes.iter().filter(|o| !o.pass).collect();
    if !failed.is_empty() {
        writeln!(out, "\n**Failures**\n\n```")?;
        for o in failed {
            writeln!(out, "{}", super::check_text::rule_line(o))?;
            for d in details(o) {
                writeln!(out, "    {d}")?;
            }
        }
        writeln!(out, "```")?;
    }
    writeln!(out, "\n{}", closing(r))
}
