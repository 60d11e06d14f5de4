//! `layout-diff OLD NEW --explain NAME`: for one object, struct or function of a diff,
//! the evidence that it is hot, the root change that moved it and the rule that
//! decided its severity, as the diff itself decided them.

use std::fmt::{self, Write};

use super::diff_lines::{meeting, names, tenant_names};
use layout_diff_core::diff::lines::{LineMember, LineSharing, LineTenant};
use layout_diff_core::diff::{FunctionChange, PlacementChange, Report, ShiftRun, StructChange};
use layout_diff_core::model::Space;
use layout_diff_core::show::MemberBytes;

/// Which build of the diff a shared line is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// OLD.
    Old,
    /// NEW.
    New,
}

/// Names every member of a tenant on a shared line, in the build given and the space
/// given, with its bytes there (`show::members_on` of the loaded build): the judgement
/// keeps only the written members of the other objects on a line.
pub type Members<'x> = dyn Fn(Build, Space, &LineTenant<'_>) -> Vec<MemberBytes> + 'x;

/// Writes the explanation of `name` (a symbol as the report spells it, or a struct
/// name with or without `struct `); `false` when no change has that name (nothing is
/// written then). With `members`, each shared line names every member of every object
/// on it; without, the object's own and the written members of the others.
pub fn explain(
    out: &mut impl Write,
    r: &Report<'_>,
    name: &str,
    members: Option<&Members<'_>>,
) -> Result<bool, fmt::Error> {
    let mut found = false;
    let bare = name.strip_prefix("struct ").unwrap_or(name);
    for c in r.data.iter().chain(&r.percpu) {
        if c.name.is(name) || c.name.name == name {
            object(out, r, c, members)?;
            found = true;
        }
    }
    for f in &r.functions {
        if f.name.is(name) || f.name.name == name {
            function(out, r, f)?;
            found = true;
        }
    }
    for s in &r.structs {
        if s.name == bare {
            structure(out, r, s)?;
            found = true;
        }
    }
    Ok(found)
}

fn run_cause(out: &mut impl Write, r: &Report<'_>, run: Option<usize>) -> fmt::Result {
    let Some(run) = run.and_then(|i| r.runs.get(i)) else {
        writeln!(
            out,
            "  root cause: not in a shift run (its own size or neighbours changed)"
        )?;
        return Ok(());
    };
    let root = run.root.and_then(|i| r.causes.get(i));
    writeln!(
        out,
        "  root cause: {}",
        root.map_or("(function runs have no filed root)", |c| c.what.as_str())
    )?;
    writeln!(out, "  in {}", super::diff_lines::run_line(run))?;
    run_summary(out, run)
}

fn run_summary(out: &mut impl Write, run: &ShiftRun) -> fmt::Result {
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

fn object(
    out: &mut impl Write,
    r: &Report<'_>,
    c: &PlacementChange<'_>,
    members: Option<&Members<'_>>,
) -> fmt::Result {
    let at = c.placement();
    writeln!(
        out,
        "{} ({}, {} B) in {}",
        c.name,
        c.type_name.unwrap_or("type unknown"),
        c.size.new,
        c.section
    )?;
    writeln!(
        out,
        "  place {:#x} -> {:#x}; offset in line {:#04x} -> {:#04x}; lines {} -> {}",
        c.place.old,
        c.place.new,
        at.old.offset_in_line,
        at.new.offset_in_line,
        at.old.lines,
        at.new.lines
    )?;
    writeln!(
        out,
        "  neighbours: {}  ->  {}",
        tenant_names(c.co_tenants().old),
        tenant_names(c.co_tenants().new)
    )?;
    match &c.sharing {
        Some(sh) => sharing(out, sh, c.space, members)?,
        None => writeln!(
            out,
            "  lines not judged member by member: no evidence that it is hot, and no hot function writes it"
        )?,
    }
    writeln!(
        out,
        "  evidence: {}",
        c.evidence.map_or("none".to_string(), |e| e.to_string())
    )?;
    if let Some(cold) = c.cold {
        writeln!(out, "  cold: {}", cold.name())?;
    }
    if let Some(q) = c.quiet {
        writeln!(out, "  storage: {q}")?;
    }
    for m in c.member_lines.iter().filter(|m| m.evidence.is_some()) {
        writeln!(
            out,
            "  hot member {}: line {} -> {} [{}]",
            m.name,
            super::diff_lines::opt(m.line.old),
            super::diff_lines::opt(m.line.new),
            m.evidence.map(|e| e.to_string()).unwrap_or_default()
        )?;
    }
    run_cause(out, r, c.run)?;
    decision(out, c.decision.rule, c.severity, c.flagged, r)
}

/// The object's shared lines in each build, member by member, and where a hot member
/// of it meets a written member of another object.
fn sharing(
    out: &mut impl Write,
    sh: &LineSharing<'_>,
    space: Space,
    members: Option<&Members<'_>>,
) -> fmt::Result {
    writeln!(out, "  hot members: {}", hot_from(sh.hot_from))?;
    for (build, when, lines) in [
        (Build::Old, "before", &sh.old),
        (Build::New, "after", &sh.new),
    ] {
        let places: Vec<String> = lines
            .hot
            .iter()
            .map(|h| {
                let alone = if h.alone { "alone" } else { "shared" };
                format!(
                    "{} {:#x}..{:#x} on line {} ({alone})",
                    h.member.name,
                    h.member.from,
                    h.member.to,
                    crate::place_str(space, h.line)
                )
            })
            .collect();
        if !places.is_empty() {
            writeln!(out, "  hot members {when}: {}", names(&places))?;
        }
        if lines.shared.is_empty() {
            writeln!(out, "  lines shared {when}: none")?;
            continue;
        }
        writeln!(out, "  lines shared {when}:")?;
        for l in &lines.shared {
            writeln!(out, "    line {}", crate::place_str(space, l.start))?;
            for (i, t) in l.tenants.iter().enumerate() {
                // The object's own members are all in the judgement's; of the others'
                // only the written ones, the rest named by `members`.
                let all = members.filter(|_| i > 0).map(|find| find(build, space, t));
                writeln!(
                    out,
                    "      {} {:#x}..{:#x}: {}",
                    t.name,
                    t.from,
                    t.to,
                    tenant_members(t, i == 0, all.as_deref())
                )?;
            }
        }
        for m in lines.meetings.iter().take(MEETINGS) {
            writeln!(out, "    meets {when}: {}", meeting(m, space))?;
        }
        if lines.meetings.len() > MEETINGS {
            writeln!(
                out,
                "    (+{} more meetings {when})",
                lines.meetings.len() - MEETINGS
            )?;
        }
    }
    if sh.new_meetings.is_empty() {
        writeln!(
            out,
            "  new meetings of a hot member and a written member: none"
        )?;
    }
    for m in sh.new_meetings.iter().take(MEETINGS) {
        writeln!(out, "  new meeting: {}", meeting(m, space))?;
    }
    if sh.new_meetings.len() > MEETINGS {
        writeln!(
            out,
            "  (+{} more new meetings; --format json lists all)",
            sh.new_meetings.len() - MEETINGS
        )?;
    }
    Ok(())
}

/// How many meetings `--explain` spells for each build (JSON has all of them).
const MEETINGS: usize = 8;

fn hot_from(rule: &str) -> &'static str {
    match rule {
        "named" => "those that evidence or a hot writer names",
        "write-type" => {
            "its write-type members (lock, atomic, refcount, counter): the evidence names the object, not a member"
        }
        "whole" => {
            "the whole object: the evidence names the object, and it has no write-type member"
        }
        _ => "none",
    }
}

/// Every member of tenant `t` on a line, with its bytes, hot and written ones marked:
/// the judgement's members (all of the object's own, `own`; the written ones of
/// another's), in the order of `all` (every member there) when given, and "none
/// written" after another's when none is.
fn tenant_members(t: &LineTenant<'_>, own: bool, all: Option<&[MemberBytes]>) -> String {
    let Some(all) = all.filter(|_| !own) else {
        return match (own, t.members.is_empty()) {
            (true, true) => "no member on this line (padding)".to_string(),
            (false, true) => "no member written".to_string(),
            _ => t.members.iter().map(member).collect::<Vec<_>>().join("; "),
        };
    };
    let mut list: Vec<String> = all
        .iter()
        .map(
            |m| match t.members.iter().find(|j| j.name == m.name.as_str()) {
                Some(j) => member(j),
                None => format!("{} {:#x}..{:#x}", m.name, m.from, m.to),
            },
        )
        .collect();
    // A member of the judgement's that `all` does not name (they name parts alike).
    list.extend(
        t.members
            .iter()
            .filter(|j| !all.iter().any(|m| j.name == m.name.as_str()))
            .map(member),
    );
    if t.members.iter().all(|m| m.written.is_none()) {
        list.push("none written".to_string());
    }
    list.join("; ")
}

fn member(m: &LineMember<'_>) -> String {
    let mut s = format!("{} {:#x}..{:#x}", m.name, m.from, m.to);
    if let Some(h) = &m.hot {
        s.push_str(&format!(" ({})", h.short()));
    }
    if let Some(w) = &m.written {
        s.push_str(&format!(" ({})", w.short()));
    }
    s
}

fn function(out: &mut impl Write, r: &Report<'_>, f: &FunctionChange<'_>) -> fmt::Result {
    writeln!(
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
    )?;
    writeln!(
        out,
        "  evidence: {}{}",
        f.evidence.map_or("none".to_string(), |e| e.to_string()),
        if f.pinned { " (asked for by name)" } else { "" }
    )?;
    run_cause(out, r, f.run)?;
    decision(out, f.decision.rule, f.severity, f.flagged, r)
}

fn structure(out: &mut impl Write, r: &Report<'_>, s: &StructChange) -> fmt::Result {
    writeln!(
        out,
        "{} {} ({} -> {} B, {})",
        s.kind,
        s.name,
        s.size.old,
        s.size.new,
        super::diff_lines::lines_pair(s.cachelines.old, s.cachelines.new)
    )?;
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
        writeln!(out, "  no changed member has evidence of hotness")?;
    }
    for h in hot {
        writeln!(out, "  hot member {h}")?;
    }
    if !s.instances.is_empty() {
        writeln!(out, "  instances: {}", names(&s.instances))?;
    }
    match &s.sharing {
        None => writeln!(
            out,
            "  lines not judged by who shares them (no typed access map: --access)"
        )?,
        Some(sh) => {
            for (what, list) in [("new meeting", &sh.new_meetings), ("ended", &sh.ended)] {
                for m in list {
                    let line = super::diff_lines::struct_meeting(what, m);
                    writeln!(out, "  {}", line.trim_start())?;
                }
            }
            writeln!(out, "  meetings in both builds: {}", sh.kept)?;
            for f in &sh.footprints {
                writeln!(
                    out,
                    "  lines touched by {}(): {:?} -> {:?}",
                    f.function, f.old, f.new
                )?;
            }
        }
    }
    decision(out, s.decision.rule, s.severity, s.severity.flagged(), r)
}

fn decision(
    out: &mut impl Write,
    rule: &str,
    severity: layout_diff_core::diff::Severity,
    flagged: bool,
    r: &Report<'_>,
) -> fmt::Result {
    let fails = severity.category().is_some_and(|c| r.fail_on.contains(&c));
    writeln!(
        out,
        "  decided: {} by rule \"{rule}\"; {}",
        severity_word(severity),
        match (flagged, fails) {
            (true, true) =>
                "flagged, and its category is in --fail-on: the diff without --explain exits 1",
            (true, false) => "flagged, but its category is not in --fail-on",
            (false, true) =>
                "not flagged on evidence, but --fail-on includes its category: the diff without --explain exits 1",
            (false, false) => "not flagged",
        }
    )
}

/// A severity in the words the reports use: the `--fail-on` category of a listed
/// one (`neighbour`, `member`, ...), else what it says of the change.
fn severity_word(s: layout_diff_core::diff::Severity) -> &'static str {
    use layout_diff_core::diff::Severity;
    if let Some(c) = s.category() {
        return c.name();
    }
    match s {
        Severity::HotChanged => "listed, hot",
        Severity::Improvement => "improvement",
        Severity::StructWithInstance => "a struct with instances changed layout",
        Severity::ShiftRun => "moved in a shift run",
        Severity::Data => "moved",
        Severity::Struct => "a struct changed layout",
        Severity::Phase => "a function changed its start in the line",
        _ => "recorded only",
    }
}
