//! Text report of a diff: header, summary table, then the flagged changes by
//! severity, cut to a line budget unless `--all`. Pinned names are always shown.

use std::fmt::Write;

use prettytable::{Table, format, row};

use super::place_str;
use crate::diff::{
    Cause, FunctionChange, MemberChange, MemberChangeKind, PlacementChange, Report, Severity,
    ShiftRun, StructChange,
};
use crate::model::Space;

/// How much to print.
#[derive(Debug, Clone, Copy)]
pub struct View {
    /// Lines of flagged items before the cut; `None` prints everything.
    pub limit: Option<usize>,
}

/// A block of lines for one item, and whether it is pinned (always shown).
struct Block {
    lines: Vec<String>,
    pinned: bool,
}

fn signed(d: i64) -> String {
    if d < 0 {
        format!("-{:#x}", d.unsigned_abs())
    } else {
        format!("+{d:#x}")
    }
}

pub fn cause(c: &Cause) -> String {
    let after = |p: &Option<String>| match p {
        Some(p) => format!("after {p}"),
        None => "from the section start".to_string(),
    };
    let pad = |padding: i64, alignment: u64| {
        if padding == 0 {
            String::new()
        } else {
            format!(" {padding:+} B padding (align {alignment})")
        }
    };
    match c {
        Cause::Changes {
            previous,
            items,
            omitted_items,
            bytes,
            padding,
            alignment,
        } => format!(
            "{} = {bytes:+} B{} {}",
            items_str(items, *omitted_items),
            pad(*padding, *alignment),
            after(previous)
        ),
        Cause::Padding {
            previous,
            padding,
            alignment,
            ..
        } => format!(
            "alignment padding alone ({padding:+} B, align {alignment}) {}",
            after(previous)
        ),
        Cause::Reordered {
            previous,
            items,
            omitted_items,
            bytes,
            padding,
            alignment,
        } => format!(
            "reordered: {} = {bytes:+} B{} {}",
            items_str(items, *omitted_items),
            pad(*padding, *alignment),
            after(previous)
        ),
        Cause::Unexplained {
            previous,
            items,
            omitted_items,
            bytes,
            residual,
        } => {
            let found = if items.is_empty() {
                "nothing changed".to_string()
            } else {
                format!("{} = {bytes:+} B", items_str(items, *omitted_items))
            };
            format!(
                "unexplained: {found} {}, {residual:+} B unaccounted",
                after(previous)
            )
        }
    }
}

fn items_str(items: &[crate::diff::CauseItem], omitted: usize) -> String {
    let one = |i: &crate::diff::CauseItem| match i.change {
        crate::diff::ItemKind::Resized => {
            format!("{} {} -> {} B", i.symbol, i.size.old, i.size.new)
        }
        crate::diff::ItemKind::Added => format!("+{} ({} B)", i.symbol, i.size.new),
        crate::diff::ItemKind::Removed => format!("-{} ({} B)", i.symbol, i.size.old),
        crate::diff::ItemKind::Realigned => format!("{} now aligned", i.symbol),
        crate::diff::ItemKind::Prefix => format!("{} {} -> {} B", i.symbol, i.size.old, i.size.new),
        crate::diff::ItemKind::MovedIn => format!("{} moved in ({} B)", i.symbol, i.size.new),
        crate::diff::ItemKind::MovedOut => format!("{} moved out ({} B)", i.symbol, i.size.old),
    };
    let list: Vec<String> = items.iter().map(one).collect();
    if omitted > 0 {
        format!("{} (+{omitted} smaller)", names(&list))
    } else {
        names(&list)
    }
}

/// Up to four names, then how many more.
fn names(list: &[String]) -> String {
    match list.len() {
        0 => String::new(),
        1..=4 => list.join(", "),
        n => format!("{}, ... (+{} more)", list[..3].join(", "), n - 3),
    }
}

fn run_line(r: &ShiftRun) -> String {
    let what = if r.functions { "functions" } else { "objects" };
    let whole = if r.whole_lines {
        " (whole lines: no line change)"
    } else {
        ""
    };
    let span = if r.count == 1 {
        r.first.clone()
    } else {
        format!("{}..{}", r.first, r.last)
    };
    let what = if r.count == 1 {
        what.trim_end_matches('s')
    } else {
        what
    };
    format!(
        "run {} .. {}  {} {what} {span}  {}{whole}  cause: {}",
        place_str(r.space, r.start.old),
        place_str(r.space, r.end.old),
        r.count,
        signed(r.delta),
        cause(&r.cause)
    )
}

fn tenant_names(t: &[crate::diff::Tenant]) -> String {
    if t.is_empty() {
        return "(none)".into();
    }
    names(&t.iter().map(|x| x.name.clone()).collect::<Vec<_>>())
}

fn placement_block(c: &PlacementChange, pinned: bool, all: bool) -> Block {
    let ty = match &c.type_name {
        Some(t) => format!("{t}, {} B", c.size.new),
        None => format!("{} B", c.size.new),
    };
    let hot = match (c.write_hot_type, c.gained_hot_neighbours.is_empty()) {
        _ if c.severity == Severity::Improvement => "  [improvement: fewer neighbours]".to_string(),
        (true, false) => format!(
            "  [write-hot, new write-hot neighbour {}]",
            names(&c.gained_hot_neighbours)
        ),
        (true, true) => "  [write-hot]".to_string(),
        _ => String::new(),
    };
    let size = if c.size.changed() {
        format!(", size {} -> {}", c.size.old, c.size.new)
    } else {
        String::new()
    };
    let mut lines = vec![
        format!(
            "  {} ({ty})  {} -> {} ({}){hot}",
            c.name,
            place_str(c.space, c.place.old),
            place_str(c.space, c.place.new),
            signed(c.delta)
        ),
        format!(
            "      offset in line {:#04x} -> {:#04x}, in pair {:#04x} -> {:#04x}, lines {} -> {}{size}",
            c.old.offset_in_line,
            c.new.offset_in_line,
            c.old.offset_in_pair,
            c.new.offset_in_pair,
            c.old.lines,
            c.new.lines
        ),
    ];
    if c.co_tenants_changed || pinned {
        lines.push(format!(
            "      shares lines with: {}  ->  {}",
            tenant_names(&c.co_tenants.old),
            tenant_names(&c.co_tenants.new)
        ));
    }
    if all || pinned {
        for m in &c.member_lines {
            lines.push(format!(
                "      member {} now on line {} (was {})",
                m.name,
                opt(m.line.new),
                opt(m.line.old)
            ));
        }
    } else if !c.member_lines.is_empty() {
        let moves: Vec<String> = c
            .member_lines
            .iter()
            .map(|m| match m.line.old {
                Some(old) => format!("{} {old}->{}", m.name, opt(m.line.new)),
                None => format!("{} (new) {}", m.name, opt(m.line.new)),
            })
            .collect();
        lines.push(format!("      members changing line: {}", names(&moves)));
    }
    Block { lines, pinned }
}

fn opt(v: Option<u64>) -> String {
    v.map_or("-".into(), |x| x.to_string())
}

/// `5240`, or `2344:1` for a bitfield (byte offset and bit), or `-` when absent.
fn position(offset: Option<u64>, bit: Option<u64>) -> String {
    match (offset, bit) {
        (Some(o), Some(b)) => format!("{o}:{b}"),
        (Some(o), None) => o.to_string(),
        _ => "-".into(),
    }
}

/// `:3` for a 3-bit bitfield, else empty.
fn bit_width(m: &MemberChange) -> String {
    m.bit_size
        .new
        .or(m.bit_size.old)
        .map(|b| format!(":{b}"))
        .unwrap_or_default()
}

/// The member's type in the new build, else the old.
fn member_type(m: &MemberChange) -> &str {
    m.type_name
        .new
        .as_deref()
        .or(m.type_name.old.as_deref())
        .unwrap_or("")
}

fn member_line(m: &MemberChange) -> String {
    let width = bit_width(m);
    let ty = member_type(m);
    match m.kinds.first() {
        Some(MemberChangeKind::Added) => format!(
            "      + {}{width}  {ty} at {} size {} (line {})",
            m.name,
            position(m.offset.new, m.bit_offset.new),
            opt(m.size.new),
            opt(m.line.new)
        ),
        Some(MemberChangeKind::Removed) => format!(
            "      - {}{width}  {ty} was at {} size {}",
            m.name,
            position(m.offset.old, m.bit_offset.old),
            opt(m.size.old)
        ),
        _ => {
            let mut s = format!(
                "      ~ {}  {} -> {}",
                m.name,
                position(m.offset.old, m.bit_offset.old),
                position(m.offset.new, m.bit_offset.new)
            );
            if m.size.changed() {
                let _ = write!(s, ", size {} -> {}", opt(m.size.old), opt(m.size.new));
            }
            if m.type_name.changed() {
                let _ = write!(
                    s,
                    ", type {} -> {}",
                    m.type_name.old.as_deref().unwrap_or("-"),
                    m.type_name.new.as_deref().unwrap_or("-")
                );
            }
            if m.line.changed() {
                let _ = write!(s, " (line {} -> {})", opt(m.line.old), opt(m.line.new));
            }
            s
        }
    }
}

/// One member change in a few words: `+kstack_offset@5240`, `~rethooks 5248->5256 (line 81->82)`.
fn member_short(m: &MemberChange) -> String {
    let width = bit_width(m);
    match m.kinds.first() {
        Some(MemberChangeKind::Added) => {
            format!(
                "+{}{width}@{}",
                m.name,
                position(m.offset.new, m.bit_offset.new)
            )
        }
        Some(MemberChangeKind::Removed) => {
            format!(
                "-{}{width}@{}",
                m.name,
                position(m.offset.old, m.bit_offset.old)
            )
        }
        _ => {
            let mut s = format!("~{}", m.name);
            if m.offset.changed() || m.bit_offset.changed() {
                s.push_str(&format!(
                    " {}->{}",
                    position(m.offset.old, m.bit_offset.old),
                    position(m.offset.new, m.bit_offset.new)
                ));
            }
            if m.line.changed() {
                s.push_str(&format!(" (line {}->{})", opt(m.line.old), opt(m.line.new)));
            }
            if m.size.changed() {
                s.push_str(&format!(" size {}->{}", opt(m.size.old), opt(m.size.new)));
            }
            if m.type_name.changed() {
                s.push_str(&format!(
                    " type {}->{}",
                    m.type_name.old.as_deref().unwrap_or("-"),
                    m.type_name.new.as_deref().unwrap_or("-")
                ));
            }
            s
        }
    }
}

/// A struct asked for with `--struct`, as pahole lays it out, with the old and the new
/// offset of every member side by side and line boundaries of the new layout.
fn side_by_side(s: &StructChange) -> Vec<String> {
    let mut out = vec![format!(
        "    {} {} {{{:>44}",
        s.kind, s.name, "/*    old ->    new  size */"
    )];
    let mut line = 0;
    for m in &s.layout {
        if let Some(l) = m.line.new
            && l > line
        {
            out.push(format!("\t/* --- cacheline {l} boundary --- */"));
            line = l;
        }
        let width = bit_width(m);
        let (ty, declarator) = super::pahole::split_declarator(member_type(m), &m.name);
        let decl = format!("\t{ty:<26} {declarator}{width};");
        let mark = match m.kinds.first() {
            Some(MemberChangeKind::Added) => "  + added",
            Some(MemberChangeKind::Removed) => "  - removed",
            Some(_) => "  ~ changed",
            None => "",
        };
        out.push(format!(
            "{decl:<50} /* {:>7} -> {:>7} {:>5} */{mark}",
            position(m.offset.old, m.bit_offset.old),
            position(m.offset.new, m.bit_offset.new),
            opt(m.size.new.or(m.size.old))
        ));
    }
    out.push("    };".into());
    out
}

fn struct_block(s: &StructChange, pinned: bool, all: bool) -> Block {
    let inst = if s.instances.is_empty() {
        String::new()
    } else {
        format!("; instances: {}", names(&s.instances))
    };
    let align = if s.alignment.changed() {
        format!(", align {} -> {}", s.alignment.old, s.alignment.new)
    } else {
        String::new()
    };
    let mut lines = vec![format!(
        "  {} {} ({} -> {} B, {} -> {} lines{align}, holes {} -> {} B, padding {} -> {}{inst})",
        s.kind,
        s.name,
        s.size.old,
        s.size.new,
        s.cachelines.old,
        s.cachelines.new,
        s.sum_holes.old,
        s.sum_holes.new,
        s.padding.old,
        s.padding.new
    )];
    // Added and removed members first, then moves that cross a line, then the rest.
    let mut ms: Vec<&MemberChange> = s.members.iter().collect();
    ms.sort_by_key(|m| {
        let k = m.kinds.first().copied();
        (
            !matches!(k, Some(MemberChangeKind::Added | MemberChangeKind::Removed)),
            !m.line.changed(),
        )
    });
    if !s.layout.is_empty() {
        lines.extend(side_by_side(s));
    } else if all || pinned {
        lines.extend(ms.iter().map(|m| member_line(m)));
    } else {
        let short: Vec<String> = ms.iter().map(|m| member_short(m)).collect();
        if !short.is_empty() {
            lines.push(format!("      {}", names(&short)));
        }
    }
    lines.extend(s.groups.iter().map(group_line));
    Block { lines, pinned }
}

/// One changed cache-line group: `group rx: 20+20 B, 1 line -> 20+76 B, 2 lines, +rx_dropped`.
fn group_line(g: &crate::diff::groups::GroupChange) -> String {
    let side = |o: Option<u64>, s: Option<u64>, l: Option<u64>, a: Option<bool>| match (o, s, l) {
        (Some(o), Some(s), Some(l)) => format!(
            "{o}+{s} B, {l} line{}{}",
            if l == 1 { "" } else { "s" },
            if a == Some(true) {
                " (starts a line)"
            } else {
                ""
            }
        ),
        _ => "(none)".to_string(),
    };
    let mut t = format!(
        "      group {}: {} -> {}",
        g.name,
        side(g.offset.old, g.size.old, g.lines.old, g.line_aligned.old),
        side(g.offset.new, g.size.new, g.lines.new, g.line_aligned.new)
    );
    for m in &g.added_members {
        t += &format!(", +{m}");
    }
    for m in &g.removed_members {
        t += &format!(", -{m}");
    }
    t
}

fn function_summary(r: &Report, view: View) -> Vec<String> {
    let f = &r.summary.functions;
    let flagged = if f.flagged > 0 {
        format!(
            "{} flagged (asked for by name or --fail-on text)",
            f.flagged
        )
    } else {
        "information, not flagged (--fail-on text flags them)".to_string()
    };
    let mut out = vec![format!(
        "  {} functions changed their start mod {}: {flagged}; {} runs change line membership, {} shift by whole lines; largest:",
        f.line_offset_changed, r.line_size, f.runs, f.whole_line_runs
    )];
    let mut runs: Vec<&ShiftRun> = r
        .runs
        .iter()
        .filter(|x| x.functions && !x.whole_lines)
        .collect();
    runs.sort_by(|a, b| b.count.cmp(&a.count).then(a.start.old.cmp(&b.start.old)));
    let n = if view.limit.is_none() { runs.len() } else { 2 };
    for run in runs.iter().take(n) {
        out.push(format!("  {}", run_line(run)));
    }
    let pinned = |c: &&FunctionChange| r.pinned_symbols.contains(&c.name);
    let shown: Vec<&FunctionChange> = if view.limit.is_none() {
        r.functions.iter().collect()
    } else {
        r.functions.iter().filter(pinned).collect()
    };
    for c in shown {
        out.push(function_line(c, r.line_size));
        if let Some(run) = c
            .run
            .and_then(|i| r.runs.get(i))
            .filter(|_| view.limit.is_some())
        {
            out.push(format!(
                "      in a run of {} moved {}: {}",
                run.count,
                signed(run.delta),
                cause(&run.cause)
            ));
        }
    }
    out
}

fn function_line(c: &FunctionChange, line_size: u64) -> String {
    format!(
        "  {}  {:016x} -> {:016x}  mod {line_size} {:#04x} -> {:#04x}, lines {} -> {}",
        c.name, c.address.old, c.address.new, c.phase.old, c.phase.new, c.lines.old, c.lines.new
    )
}

/// Titled groups of lines, in severity order, cut to the view's budget; and how many
/// items were cut.
pub(crate) fn sections(r: &Report, view: View) -> (Vec<(String, Vec<String>)>, usize) {
    let mut sections: Vec<(String, Vec<Block>)> = Vec::new();
    let all = view.limit.is_none();
    let pinned = |name: &str| r.pinned_symbols.iter().any(|p| p == name);

    // Per-CPU: runs (each with its cause), then changes outside flagged runs.
    let mut pc: Vec<Block> = r
        .runs
        .iter()
        .filter(|x| x.space == Space::Percpu)
        .map(|x| Block {
            lines: vec![format!("  {}", run_line(x))],
            pinned: false,
        })
        .collect();
    // Pinned first, then by risk (a write-hot variable with a new neighbour first).
    let mut percpu: Vec<&PlacementChange> = r.percpu.iter().collect();
    percpu.sort_by_key(|c| (!pinned(&c.name), c.risk, c.place.old));
    for c in percpu {
        let in_run = c.run.is_some_and(|i| !r.runs[i].whole_lines);
        if pinned(&c.name) || all || (c.flagged && !in_run) {
            pc.push(placement_block(c, pinned(&c.name), all));
        }
    }
    sections.push(("per-CPU (offsets from __per_cpu_start)".into(), pc));

    let mut data: Vec<&PlacementChange> = r
        .data
        .iter()
        .filter(|c| {
            pinned(&c.name)
                || all
                || matches!(
                    c.severity,
                    Severity::AlignedObject | Severity::WriteHot | Severity::Straddle
                )
        })
        .collect();
    // By risk (write-hot with a new write-hot neighbour, line-aligned moved in its
    // line, ...), then severity and hot members.
    data.sort_by_key(|c| {
        (
            !pinned(&c.name),
            c.risk,
            c.severity,
            c.gained_hot_neighbours.is_empty(),
            std::cmp::Reverse(c.hot_members),
            c.place.old,
        )
    });
    sections.push((
        "data objects (cacheline-aligned, write-hot with new neighbours, new straddlers)".into(),
        data.iter()
            .map(|c| placement_block(c, pinned(&c.name), all))
            .collect(),
    ));

    let pinned_struct = |n: &str| r.pinned_structs.iter().any(|p| p == n);
    let mut structs: Vec<&StructChange> = r
        .structs
        .iter()
        .filter(|s| {
            all || pinned_struct(&s.name)
                || matches!(s.severity, Severity::StructWithInstance | Severity::Group)
        })
        .collect();
    // Most members changing line (or added/removed) first: those move hot fields.
    structs.sort_by_key(|s| {
        let moved = s
            .members
            .iter()
            .filter(|m| {
                m.line.changed()
                    || m.kinds.contains(&MemberChangeKind::Added)
                    || m.kinds.contains(&MemberChangeKind::Removed)
            })
            .count();
        (
            !pinned_struct(&s.name),
            s.severity,
            std::cmp::Reverse(moved),
            s.name.clone(),
        )
    });
    sections.push((
        "structs with a global or per-CPU instance".into(),
        structs
            .iter()
            .map(|s| struct_block(s, pinned_struct(&s.name), all))
            .collect(),
    ));

    let mut runs: Vec<&ShiftRun> = r
        .runs
        .iter()
        .filter(|x| x.space == Space::Global && !x.functions && (all || !x.whole_lines))
        .collect();
    runs.sort_by(|a, b| b.count.cmp(&a.count).then(a.start.old.cmp(&b.start.old)));
    sections.push((
        "data shift runs (largest first)".into(),
        runs.iter()
            .map(|x| Block {
                lines: vec![format!("  {}", run_line(x))],
                pinned: false,
            })
            .collect(),
    ));

    // Shares of the line budget per section (per-CPU, data, structs, runs); what a
    // section leaves unused carries over to the next.
    let shares = [30, 25, 35, 10];
    let mut carry = 0usize;
    let mut cut = 0usize;
    let mut out = Vec::new();
    for (i, (title, blocks)) in sections.into_iter().enumerate() {
        let mut budget = match view.limit {
            Some(l) => l * shares[i] / 100 + carry,
            None => usize::MAX,
        };
        let mut body = Vec::new();
        for b in blocks {
            if b.pinned || b.lines.len() <= budget {
                if !b.pinned {
                    budget -= b.lines.len();
                }
                body.extend(b.lines);
            } else {
                cut += 1;
                budget = 0;
            }
        }
        carry = if view.limit.is_some() { budget } else { 0 };
        if !body.is_empty() {
            out.push((title, body));
        }
    }
    out.push(("text".into(), function_summary(r, view)));
    (out, cut)
}

fn build(b: &Option<String>) -> String {
    b.as_deref().map_or("no build-id".to_string(), |b| {
        format!("build-id {}", &b[..b.len().min(12)])
    })
}

/// The closing line: what the exit code means here.
pub(crate) fn closing(r: &Report, cut: usize) -> String {
    let more = if cut > 0 {
        format!("; {cut} more items cut, --all prints them")
    } else {
        String::new()
    };
    let cats: Vec<&str> = r.fail_on.iter().map(|c| c.name()).collect();
    let code = u8::from(r.failing > 0);
    format!(
        "exit {code}: {} flagged changes, {} in --fail-on categories ({}){more} (--format json for all data)",
        r.flagged,
        r.failing,
        cats.join(",")
    )
}

/// How many objects only lost neighbours, when any did.
pub(crate) fn improvements_line(r: &Report) -> Option<String> {
    let (d, p) = (r.summary.data.improvements, r.summary.percpu.improvements);
    (d + p > 0).then(|| {
        format!(
            "improvements (only lost neighbours, not flagged; --all lists them): {d} data objects, {p} per-CPU"
        )
    })
}

/// Which storage the report never judges write-hot or straddling.
pub(crate) fn quiet_line(r: &Report) -> String {
    let list: Vec<String> = r
        .quiet_regions
        .iter()
        .map(|q| format!("{} {}", q.what, q.from))
        .collect();
    format!("not judged write-hot or straddling: {}", list.join("; "))
}

/// What each column of the summary counts.
pub(crate) fn legend() -> &'static str {
    "changed: place, size or line neighbours changed; moved in line: offset in line (functions: start mod line) changed;\n\
     shift runs: runs of equal shift that change line membership; whole-line runs: shifts by whole lines"
}

/// True when the diff found nothing at all (no change in any row).
pub(crate) fn nothing_changed(r: &Report) -> bool {
    summary_rows(r).iter().all(|(_, c)| {
        c.changed + c.added + c.removed + c.line_offset_changed + c.runs + c.whole_line_runs == 0
    })
}

/// The report as text.
pub fn render(r: &Report, view: View) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "layout-diff  {} ({})  ->  {} ({})",
        r.old.file,
        build(&r.old.build_id),
        r.new.file,
        build(&r.new.build_id)
    );
    let _ = writeln!(
        out,
        "line {} B ({}), pair {} B",
        r.line_size,
        r.new.line_size_from,
        2 * r.line_size
    );
    if nothing_changed(r) && r.pinned_symbols.is_empty() && r.pinned_structs.is_empty() {
        let _ = writeln!(out, "\nno changes");
        return out;
    }
    let mut t = Table::new();
    t.set_format(*format::consts::FORMAT_CLEAN);
    t.set_titles(row!["", r->"changed", r->"flagged", r->"moved in line", r->"shift runs", r->"whole-line runs", r->"added", r->"removed"]);
    for (name, c) in summary_rows(r) {
        t.add_row(row![name, r->c.changed, r->c.flagged, r->c.line_offset_changed, r->c.runs, r->c.whole_line_runs, r->c.added, r->c.removed]);
    }
    let _ = write!(out, "\n{t}");
    let _ = writeln!(out, "{}", legend());
    if let Some(l) = improvements_line(r) {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(out, "{}", quiet_line(r));
    let (sections, cut) = sections(r, view);
    for (title, lines) in sections {
        let _ = writeln!(out, "\n{title}");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
    }
    let _ = writeln!(out, "\n{}", closing(r, cut));
    out
}

/// The summary table's rows.
pub(crate) fn summary_rows(r: &Report) -> [(&'static str, &crate::diff::Counts); 4] {
    let s = &r.summary;
    [
        ("structs", &s.structs),
        ("data objects", &s.data),
        ("per-CPU", &s.percpu),
        ("functions", &s.functions),
    ]
}
