//! `layout-diff OLD NEW --explain NAME`: for one object, struct or function of a diff,
//! the evidence that it is hot, the root change that moved it and the rule that
//! decided its severity, as the diff itself decided them.

use std::fmt::Write;

use super::diff_lines::{names, tenant_names};
use crate::diff::{FunctionChange, PlacementChange, Report, ShiftRun, StructChange};

/// The explanation of `name` (a symbol as the report spells it, or a struct name with
/// or without `struct `), or `None` when no change has that name.
pub fn explain(r: &Report<'_>, name: &str) -> Option<String> {
    let mut out = String::new();
    let bare = name.strip_prefix("struct ").unwrap_or(name);
    for c in r.data.iter().chain(&r.percpu) {
        if c.name.is(name) || c.name.name == name {
            object(&mut out, r, c);
        }
    }
    for f in &r.functions {
        if f.name.is(name) || f.name.name == name {
            function(&mut out, r, f);
        }
    }
    for s in &r.structs {
        if s.name == bare {
            structure(&mut out, s);
        }
    }
    (!out.is_empty()).then_some(out)
}

fn run_cause(out: &mut String, r: &Report<'_>, run: Option<usize>) {
    let Some(run) = run.and_then(|i| r.runs.get(i)) else {
        let _ = writeln!(
            out,
            "  root cause: not in a shift run (its own size or neighbours changed)"
        );
        return;
    };
    let root = run.root.and_then(|i| r.causes.get(i));
    let _ = writeln!(
        out,
        "  root cause: {}",
        root.map_or("(function runs have no filed root)", |c| c.what.as_str())
    );
    let _ = writeln!(out, "  in {}", super::diff_lines::run_line(run));
    let _ = run_summary(out, run);
}

fn run_summary(out: &mut String, run: &ShiftRun) -> std::fmt::Result {
    writeln!(
        out,
        "  the run moved {} by {} bytes{}",
        if run.functions {
            super::diff_lines::count(run.count, "function", "functions")
        } else {
            super::diff_lines::count(run.count, "object", "objects")
        },
        run.delta,
        if run.whole_lines {
            " (a whole number of lines: no line membership changed inside it)"
        } else {
            ""
        }
    )
}

fn object(out: &mut String, r: &Report<'_>, c: &PlacementChange<'_>) {
    let at = c.placement();
    let _ = writeln!(
        out,
        "{} ({}, {} B) in {}",
        c.name,
        c.type_name.unwrap_or("type unknown"),
        c.size.new,
        c.section
    );
    let _ = writeln!(
        out,
        "  place {:#x} -> {:#x}; offset in line {:#04x} -> {:#04x}; lines {} -> {}",
        c.place.old,
        c.place.new,
        at.old.offset_in_line,
        at.new.offset_in_line,
        at.old.lines,
        at.new.lines
    );
    let _ = writeln!(
        out,
        "  neighbours: {}  ->  {}",
        tenant_names(c.co_tenants().old),
        tenant_names(c.co_tenants().new)
    );
    let _ = writeln!(
        out,
        "  new neighbours written at run time: {}",
        if c.written_neighbours.is_empty() {
            "none".to_string()
        } else {
            names(&c.written_neighbours)
        }
    );
    let _ = writeln!(
        out,
        "  evidence: {}",
        c.evidence.map_or("none".to_string(), |e| e.to_string())
    );
    if let Some(cold) = c.cold {
        let _ = writeln!(out, "  cold: {}", cold.name());
    }
    if let Some(q) = c.quiet {
        let _ = writeln!(out, "  storage: {q}");
    }
    for m in c.member_lines.iter().filter(|m| m.evidence.is_some()) {
        let _ = writeln!(
            out,
            "  hot member {}: line {} -> {} [{}]",
            m.name,
            super::diff_lines::opt(m.line.old),
            super::diff_lines::opt(m.line.new),
            m.evidence.map(|e| e.to_string()).unwrap_or_default()
        );
    }
    run_cause(out, r, c.run);
    decision(out, c.decision.rule, c.severity, c.flagged, r);
}

fn function(out: &mut String, r: &Report<'_>, f: &FunctionChange<'_>) {
    let _ = writeln!(
        out,
        "{} (function)\n  {:#x} -> {:#x}; start mod {} {:#04x} -> {:#04x}; lines {} -> {}",
        f.name,
        f.address.old,
        f.address.new,
        r.line_size,
        f.phase.old,
        f.phase.new,
        f.lines.old,
        f.lines.new
    );
    let _ = writeln!(
        out,
        "  evidence: {}{}",
        f.evidence.map_or("none".to_string(), |e| e.to_string()),
        if f.pinned { " (asked for by name)" } else { "" }
    );
    run_cause(out, r, f.run);
    decision(out, f.decision.rule, f.severity, f.flagged, r);
}

fn structure(out: &mut String, s: &StructChange) {
    let _ = writeln!(
        out,
        "{} {} ({} -> {} B, {})",
        s.kind,
        s.name,
        s.size.old,
        s.size.new,
        super::diff_lines::lines_pair(s.cachelines.old, s.cachelines.new)
    );
    let hot: Vec<String> = s
        .members
        .iter()
        .filter_map(|m| {
            let e = m.evidence.as_ref()?;
            Some(format!(
                "{} line {} -> {} [{}]",
                m.name,
                super::diff_lines::opt(m.line.old),
                super::diff_lines::opt(m.line.new),
                e.what
            ))
        })
        .collect();
    if hot.is_empty() {
        let _ = writeln!(out, "  no changed member has evidence of hotness");
    }
    for h in hot {
        let _ = writeln!(out, "  hot member {h}");
    }
    if !s.instances.is_empty() {
        let _ = writeln!(out, "  instances: {}", names(&s.instances));
    }
    let _ = writeln!(
        out,
        "  decided: {:?} by rule \"{}\"",
        s.severity, s.decision.rule
    );
}

fn decision(
    out: &mut String,
    rule: &str,
    severity: crate::diff::Severity,
    flagged: bool,
    r: &Report<'_>,
) {
    let fails = severity.category().is_some_and(|c| r.fail_on.contains(&c));
    let _ = writeln!(
        out,
        "  decided: {} by rule \"{rule}\"; {}",
        severity_word(severity),
        match (flagged, fails) {
            (true, true) => "flagged, and its category is in --fail-on: exit 1",
            (true, false) => "flagged, but its category is not in --fail-on",
            (false, true) => "not flagged on evidence, but --fail-on includes its category: exit 1",
            (false, false) => "not flagged",
        }
    );
}

fn severity_word(s: crate::diff::Severity) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{s:?}"))
}
