//! Text output of `show --contention`: the contended lines of one build, ranked, each
//! as its strongest meeting on two lines (the written member and its writer, the other
//! member and the function touching it), within 100 columns and, without `--all`, a
//! first screen of at most 60 lines.

use std::fmt::{self, Write};

use layout_diff_core::contention::{Audit, AuditSide, ContendedLine, LineKind};
use layout_diff_core::show::Header;

use crate::show_text::write_header;
use crate::wrap::{WIDTH, fit};

/// Lines of output a first screen holds (header and summary included).
pub const SCREEN: usize = 60;

/// The audit `a` of the build `h` names; every line with `all`, else what fits a
/// first screen.
pub fn write(out: &mut impl Write, h: &Header, a: &Audit, all: bool) -> fmt::Result {
    let mut text = String::new();
    write_header(&mut text, h)?;
    summary(&mut text, a)?;
    let mut out_lines: Vec<String> = text.lines().flat_map(|l| fit(l, WIDTH)).collect();
    let mut shown = 0;
    for (i, line) in a.lines.iter().enumerate() {
        let entry: Vec<String> = entry(i + 1, line)
            .iter()
            .flat_map(|l| fit(l, WIDTH))
            .collect();
        // Room for the line that counts the rest.
        if !all && out_lines.len() + entry.len() + 1 > SCREEN {
            break;
        }
        out_lines.extend(entry);
        shown += 1;
    }
    if shown < a.lines.len() {
        out_lines.push(format!(
            "{} more: --all lists them, --format json lists every pair",
            a.lines.len() - shown
        ));
    }
    for l in out_lines {
        writeln!(out, "{l}")?;
    }
    Ok(())
}

/// `1 line`, `2 lines`.
fn lines(n: usize) -> String {
    match n {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    }
}

/// What was audited and how many lines were found.
fn summary(out: &mut String, a: &Audit) -> fmt::Result {
    let only = a
        .struct_name
        .as_deref()
        .map(|n| format!(" (struct {n}, and objects of that type)"))
        .unwrap_or_default();
    writeln!(
        out,
        "contention audit{only}: {} where a frequently written member meets one other \
         frequent code touches",
        lines(a.lines.len())
    )?;
    writeln!(
        out,
        "  global data {}, per-CPU reached from other CPUs {}, struct types {} (instances \
         line-aligned)",
        a.counts.global, a.counts.percpu, a.counts.structs
    )?;
    let f = &a.frequent;
    writeln!(
        out,
        "  frequent functions: {} measured, {} known hot, {} called by them; unknown never counts",
        f.measured, f.known, f.called_by
    )?;
    writeln!(
        out,
        "  ranked by the weaker side's evidence, the stronger's, then the functions that meet"
    )?;
    if !a.code {
        writeln!(
            out,
            "  note: the build's code was not read (x86-64 only): nothing audited"
        )?;
    } else if !a.typed {
        writeln!(
            out,
            "  note: no typed access map: struct types and remote per-CPU accesses not audited"
        )?;
    }
    if !a.lines.is_empty() {
        writeln!(out)?;
    }
    Ok(())
}

/// One ranked line, unfitted: its place and written side, then the other side.
fn entry(rank: usize, l: &ContendedLine) -> Vec<String> {
    let Some(p) = l.pairs.first() else {
        return Vec::new();
    };
    let place = match l.kind {
        LineKind::Global => format!("{:016x}", l.start),
        LineKind::Percpu => format!("percpu+{:#x}", l.start),
        LineKind::Struct => format!(
            "struct {} line {}",
            l.type_name.as_deref().unwrap_or("?"),
            l.index
        ),
    };
    let more = match l.pairs.len() {
        1 => String::new(),
        n => format!("{n} pairs, "),
    };
    vec![
        format!("{rank:>3}. {place}: {}", side(&p.written)),
        format!(
            "     beside {}; {more}{} functions",
            side(&p.other),
            l.functions
        ),
    ]
}

/// `member 0x0..0x8 written by f() (known hot)`.
fn side(s: &AuditSide) -> String {
    let verb = match (s.writes, s.remote) {
        (true, false) => "written",
        (false, false) => "read",
        (true, true) => "written from another CPU",
        (false, true) => "read from another CPU",
    };
    // Every side is frequent: the text says only why (`known`, `called by f()`).
    let why = s.why.strip_prefix("frequent: ").unwrap_or(&s.why);
    let why = why.strip_suffix(" hot").unwrap_or(why);
    format!(
        "{} {:#x}..{:#x} {verb} by {}() ({why})",
        short(&s.member),
        s.from,
        s.to,
        s.function
    )
}

/// A member path as the text prints it: a union's first alternative, and of the members
/// one access spans (a byte of bitfields) the first, with how many more (`a + 5 more`,
/// `x | 2 more`); JSON has the whole path.
fn short(member: &str) -> String {
    let alternatives: Vec<&str> = member.split(" | ").collect();
    let spans: Vec<&str> = alternatives[0].split(" + ").collect();
    let mut out = spans[0].to_string();
    if spans.len() > 1 {
        out += &format!(" + {} more", spans.len() - 1);
    }
    if alternatives.len() > 1 {
        out += &format!(" | {} more", alternatives.len() - 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::short;

    #[test]
    fn unions_and_bitfield_spans_are_shortened() {
        assert_eq!(short("nr_running"), "nr_running");
        assert_eq!(short("a + b + c | h.a + h.b + h.c"), "a + 2 more | 1 more");
        assert_eq!(short("index | dma_addr | pt_mm"), "index | 2 more");
    }
}
