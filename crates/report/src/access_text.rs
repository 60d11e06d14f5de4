//! Text output of `show --struct NAME --access`: per cache line of the type, how many
//! functions write and read it, and per member the first writers and readers with how
//! they touch it and where (a static c2c for a type), within 100 columns.

use std::fmt::{self, Write};

use layout_diff_core::model::access::AccessKind;
use layout_diff_core::typed::UNTYPED;
use layout_diff_core::typed::view::{
    CoverageView, FunctionAccess, LISTED, MemberAccess, TypeAccessView,
};

/// Widest function name printed in full.
const FUNCTION: usize = 30;

/// One type's accesses.
pub fn write_type_access(out: &mut impl Write, v: &TypeAccessView) -> fmt::Result {
    let c = &v.coverage;
    let pct = |n: u64| 100.0 * n as f64 / c.operands.max(1) as f64;
    writeln!(
        out,
        "{}: who touches each member through a pointer (machine code and DWARF; every instance)",
        v.name
    )?;
    writeln!(
        out,
        "  {} functions touch it; the build's code is {:.1}% typed ({} of {} operands)",
        v.functions,
        pct(c.typed()),
        c.typed(),
        c.operands
    )?;
    let mut members = v.members.iter().peekable();
    for line in &v.lines {
        let from = line.index * v.line_size;
        let to = from + v.line_size;
        writeln!(
            out,
            "line {} (+{:#x}..+{:#x}): {} writers, {} readers that do not write it",
            line.index,
            from,
            to - 1,
            line.writers,
            line.readers
        )?;
        while let Some(m) = members.next_if(|m| m.offset < to) {
            member(out, m)?;
        }
    }
    for m in members {
        member(out, m)?;
    }
    Ok(())
}

fn member(out: &mut impl Write, m: &MemberAccess) -> fmt::Result {
    if m.writer_count + m.reader_count == 0 {
        return writeln!(
            out,
            "  +{:#x} {} ({} B): no access seen",
            m.offset, m.member, m.size
        );
    }
    writeln!(
        out,
        "  +{:#x} {} ({} B): {} writers, {} readers",
        m.offset,
        clip(&m.member, 60),
        m.size,
        m.writer_count,
        m.reader_count
    )?;
    for (side, list, count) in [
        ('w', &m.writers, m.writer_count),
        ('r', &m.readers, m.reader_count),
    ] {
        for f in list.iter().take(LISTED) {
            function(out, side, f)?;
        }
        if count > LISTED {
            writeln!(out, "      {side} ... and {} more", count - LISTED)?;
        }
    }
    Ok(())
}

fn function(out: &mut impl Write, side: char, f: &FunctionAccess) -> fmt::Result {
    let kind = match f.kind {
        AccessKind::Atomic => "atomic",
        AccessKind::ReadWrite => "rmw",
        AccessKind::Write => "write",
        _ => "read",
    };
    let mut notes = String::new();
    if f.count > 1 {
        notes.push_str(&format!(" x{}", f.count));
    }
    if f.cold {
        notes.push_str(" cold");
    }
    if let Some(object) = &f.remote {
        notes.push_str(&format!(" remote {}", clip(object, 20)));
    }
    let source = f.source.as_deref().map(short_source).unwrap_or_default();
    let line = format!(
        "      {side} {:<width$} {kind:<6}{notes} {}",
        clip(&f.function, FUNCTION),
        clip(source, 44),
        width = FUNCTION
    );
    writeln!(out, "{}", line.trim_end())
}

/// The kernel tree's top-level directories: a source path is printed from the first
/// of them, without the build directory before it (Debian's
/// `debian/build/build_amd64_none_cloud-amd64/`, a `/build/linux-*/` checkout).
const TOP_DIRS: [&str; 22] = [
    "arch", "block", "certs", "crypto", "drivers", "fs", "include", "init", "io_uring", "ipc",
    "kernel", "lib", "mm", "net", "rust", "samples", "scripts", "security", "sound", "tools",
    "usr", "virt",
];

/// A source path from the kernel tree's top-level directory on (the whole path when
/// none is in it).
fn short_source(s: &str) -> &str {
    let mut at = 0;
    for part in s.split('/') {
        if TOP_DIRS.contains(&part) {
            return &s[at..];
        }
        at += part.len() + 1;
    }
    s
}

/// `s` cut to `n` characters, ending in `~` when cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
    out.push('~');
    out
}

/// How many functions the coverage lists by name.
const WORST: usize = 20;

/// The build's coverage by reason, and the functions with the most untyped operands.
pub fn write_coverage(out: &mut impl Write, v: &CoverageView) -> fmt::Result {
    let c = &v.coverage;
    let pct = |n: u64| 100.0 * n as f64 / c.operands.max(1) as f64;
    writeln!(
        out,
        "typed access map: {} memory operands through a register other than the stack's",
        c.operands
    )?;
    writeln!(
        out,
        "  typed {} ({:.1}%): struct or union members {} ({:.1}%), pointers to others {} ({:.1}%)",
        c.typed(),
        pct(c.typed()),
        c.members,
        pct(c.members),
        c.scalars,
        pct(c.scalars)
    )?;
    for why in UNTYPED {
        let n = c.untyped[why as usize];
        writeln!(out, "  untyped, {}: {n} ({:.1}%)", why.label(), pct(n))?;
    }
    writeln!(out, "  on the stack (not counted above): {}", c.stack)?;
    writeln!(
        out,
        "functions with the most untyped operands (--format json lists all):"
    )?;
    for f in v.functions.iter().take(WORST) {
        writeln!(
            out,
            "  {:<48} {:>6} of {:>6} typed",
            clip(&f.function, 48),
            f.typed,
            f.operands
        )?;
    }
    Ok(())
}
