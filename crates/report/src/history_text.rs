//! Text and Markdown tables for `history`: one table per name, one row per build, a
//! `*` on builds where its lines changed. Every value comes from `history::History`.

use std::fmt::{self, Write};

use layout_diff_core::history::{History, StructRow, SymbolRow};

use super::place_str;

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn symbol_cells(h: &History, r: &SymbolRow) -> Vec<String> {
    let mark = if r.changed { "*" } else { "" };
    let build = h.builds[r.build].clone();
    if !r.present {
        return vec![
            mark.into(),
            build,
            "absent".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
        ];
    }
    vec![
        mark.into(),
        build,
        match (r.space, r.place) {
            (Some(space), Some(place)) => place_str(space, place),
            _ => "-".into(),
        },
        r.offset_in_line.map_or("-".into(), |v| format!("{v:#x}")),
        r.offset_in_pair.map_or("-".into(), |v| format!("{v:#x}")),
        opt(r.lines),
        opt(r.size),
        if r.co_tenants.is_empty() {
            "-".into()
        } else {
            r.co_tenants.join(", ")
        },
    ]
}

/// Changed members shown in a cell: the first `MEMBERS_SHOWN`, then how many more
/// (`--format json` lists every one).
const MEMBERS_SHOWN: usize = 6;

fn changed_members(list: &[String]) -> String {
    match list.len() {
        0 => "-".into(),
        n if n <= MEMBERS_SHOWN => list.join(", "),
        n => format!(
            "{}, ... (+{} more)",
            list[..MEMBERS_SHOWN].join(", "),
            n - MEMBERS_SHOWN
        ),
    }
}

fn struct_cells(h: &History, r: &StructRow) -> Vec<String> {
    vec![
        if r.changed { "*" } else { "" }.into(),
        h.builds[r.build].clone(),
        if r.present {
            opt(r.size)
        } else {
            "absent".into()
        },
        opt(r.lines),
        r.members.map_or("-".into(), |m| m.to_string()),
        r.hole_count.map_or("-".into(), |n| n.to_string()),
        opt(r.holes),
        r.layouts.to_string(),
        changed_members(&r.changed_members),
    ]
}

const SYMBOL_HEAD: [&str; 8] = [
    "",
    "build",
    "place",
    "in line",
    "in pair",
    "lines",
    "size",
    "co-tenants",
];
const STRUCT_HEAD: [&str; 9] = [
    "",
    "build",
    "size",
    "lines",
    "members",
    "holes",
    "hole bytes",
    "layouts",
    "changed members",
];

/// Aligned columns; the last column is not padded.
fn table(out: &mut impl Write, head: &[&str], rows: &[Vec<String>]) -> fmt::Result {
    let mut widths: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut line = |cells: Vec<&str>| -> fmt::Result {
        let n = cells.len();
        let mut s = String::new();
        for (i, (c, w)) in cells.into_iter().zip(&widths).enumerate() {
            if i + 1 == n {
                s += c;
            } else {
                s += &format!("{c:<w$}  ");
            }
        }
        writeln!(out, "{}", s.trim_end())
    };
    line(head.to_vec())?;
    for r in rows {
        line(r.iter().map(String::as_str).collect())?;
    }
    Ok(())
}

/// Writes the text report.
pub fn render(out: &mut impl Write, h: &History) -> fmt::Result {
    for s in &h.symbols {
        writeln!(out, "symbol {} (line size {})", s.name, h.line_size)?;
        let rows: Vec<_> = s.rows.iter().map(|r| symbol_cells(h, r)).collect();
        table(out, &SYMBOL_HEAD, &rows)?;
        out.write_char('\n')?;
    }
    for s in &h.structs {
        writeln!(out, "struct {} (line size {})", s.name, h.line_size)?;
        let rows: Vec<_> = s.rows.iter().map(|r| struct_cells(h, r)).collect();
        table(out, &STRUCT_HEAD, &rows)?;
        out.write_char('\n')?;
    }
    out.write_str("* lines changed since the build before\n")
}

fn md_table(out: &mut impl Write, head: &[&str], rows: &[Vec<String>]) -> fmt::Result {
    let esc = |c: &str| c.replace('|', "\\|");
    writeln!(out, "| {} |", head.join(" | "))?;
    writeln!(out, "|{}", "---|".repeat(head.len()))?;
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| esc(c)).collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    Ok(())
}

/// Writes the Markdown report.
pub fn markdown(out: &mut impl Write, h: &History) -> fmt::Result {
    out.write_str("## Layout history\n\n")?;
    for s in &h.symbols {
        writeln!(out, "### symbol `{}`\n", s.name)?;
        let rows: Vec<_> = s.rows.iter().map(|r| symbol_cells(h, r)).collect();
        md_table(out, &SYMBOL_HEAD, &rows)?;
        out.write_char('\n')?;
    }
    for s in &h.structs {
        writeln!(out, "### struct `{}`\n", s.name)?;
        let rows: Vec<_> = s.rows.iter().map(|r| struct_cells(h, r)).collect();
        md_table(out, &STRUCT_HEAD, &rows)?;
        out.write_char('\n')?;
    }
    writeln!(
        out,
        "`*` marks builds where the lines changed since the build before (line size {}).",
        h.line_size
    )
}

#[cfg(test)]
mod tests {
    use super::changed_members;

    /// Issue 33, defect 8: a struct that changed hundreds of members gets a cell of
    /// six names and a count, not kilobytes on one line.
    #[test]
    fn a_long_list_of_changed_members_is_cut_with_a_count() {
        let list: Vec<String> = (0..90).map(|i| format!("m{i}")).collect();
        assert_eq!(
            changed_members(&list),
            "m0, m1, m2, m3, m4, m5, ... (+84 more)"
        );
        assert_eq!(changed_members(&list[..2]), "m0, m1");
        assert_eq!(changed_members(&[]), "-");
    }
}
