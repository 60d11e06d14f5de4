//! The words of a diff report: how each planned item, run, cause and closing line is
//! spelled as plain-text lines. Shared by the text and Markdown renderers (the HTML
//! renderer reuses the one-line spellings in its details); nothing here selects or ranks.

use super::place_str;
use super::plan::{Detail, FunctionItem, Item, Part, Plan, Section, TextSection};
use layout_diff_core::diff::RootCause;
use layout_diff_core::diff::{
    Cause, FunctionChange, MemberChange, MemberChangeKind, PatternCount, PatternKind,
    PlacementChange, Report, Severity, ShiftRun, StructChange,
};

pub(crate) fn signed(d: i64) -> String {
    if d < 0 {
        format!("-{:#x}", d.unsigned_abs())
    } else {
        format!("+{d:#x}")
    }
}

/// A run's cause. The bytes it names explain the run's shift relative to the symbol
/// before it, so when that symbol moved too (`previous_delta`), its shift is said.
pub fn cause(c: &Cause, previous_delta: i64) -> String {
    let after = |p: &Option<String>| match p {
        Some(p) if previous_delta != 0 => {
            format!("after {p} (itself {})", signed(previous_delta))
        }
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
        }
        | Cause::Reordered {
            previous,
            items,
            omitted_items,
            bytes,
            padding,
            alignment,
        } => format!(
            "{}{} = {bytes:+} B{} {}",
            if matches!(c, Cause::Reordered { .. }) {
                "reordered: "
            } else {
                ""
            },
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
        Cause::Unexplained {
            residual,
            no_base: true,
            ..
        } => format!(
            "unexplained: no symbol before it precedes it in both builds (the code before it \
was reordered), so no change is named ({residual:+} B)"
        ),
        Cause::Unexplained {
            previous,
            items,
            omitted_items,
            bytes,
            residual,
            ..
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

fn items_str(items: &[layout_diff_core::diff::CauseItem], omitted: usize) -> String {
    let one = |i: &layout_diff_core::diff::CauseItem| match i.change {
        layout_diff_core::diff::ItemKind::Resized => {
            format!("{} {} -> {} B", i.symbol, i.size.old, i.size.new)
        }
        layout_diff_core::diff::ItemKind::Added => format!("+{} ({} B)", i.symbol, i.size.new),
        layout_diff_core::diff::ItemKind::Removed => format!("-{} ({} B)", i.symbol, i.size.old),
        layout_diff_core::diff::ItemKind::Realigned => format!("{} now aligned", i.symbol),
        layout_diff_core::diff::ItemKind::Prefix | layout_diff_core::diff::ItemKind::Padding => {
            format!("{} {} -> {} B", i.symbol, i.size.old, i.size.new)
        }
        layout_diff_core::diff::ItemKind::MovedIn => {
            format!("{} moved in ({} B)", i.symbol, i.size.new)
        }
        layout_diff_core::diff::ItemKind::MovedOut => {
            format!("{} moved out ({} B)", i.symbol, i.size.old)
        }
        layout_diff_core::diff::ItemKind::SectionIn => match &i.sections {
            Some(s) => format!("{} moved in from {} ({} B)", i.symbol, s.old, i.size.new),
            None => format!("{} moved in ({} B)", i.symbol, i.size.new),
        },
        layout_diff_core::diff::ItemKind::SectionOut => match &i.sections {
            Some(s) => format!("{} moved out to {} ({} B)", i.symbol, s.new, i.size.old),
            None => format!("{} moved out ({} B)", i.symbol, i.size.old),
        },
    };
    let list: Vec<String> = items.iter().map(one).collect();
    if omitted > 0 {
        format!("{} (+{omitted} smaller)", names(&list))
    } else {
        names(&list)
    }
}

/// Up to four names, then how many more.
pub(crate) fn names<T: std::fmt::Display>(list: &[T]) -> String {
    let join = |l: &[T]| l.iter().map(T::to_string).collect::<Vec<_>>().join(", ");
    match list.len() {
        0 => String::new(),
        1..=4 => join(list),
        n => format!("{}, ... (+{} more)", join(&list[..3]), n - 3),
    }
}

pub(crate) fn run_line(r: &ShiftRun) -> String {
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
        cause(&r.cause, r.previous_delta)
    )
}

pub(crate) fn tenant_names(t: &[layout_diff_core::diff::Tenant]) -> String {
    if t.is_empty() {
        return "(none)".into();
    }
    names(&t.iter().map(|x| x.name()).collect::<Vec<_>>())
}

fn placement_lines(c: &PlacementChange, detail: Detail) -> Vec<String> {
    let (pinned, all) = (detail.pinned, detail.all);
    let ty = match &c.type_name {
        Some(t) => format!("{t}, {} B", c.size.new),
        None => format!("{} B", c.size.new),
    };
    let hot = match c.severity.category() {
        Some(cat) if c.severity.flagged() => format!("  [flagged: {}]", cat.name()),
        Some(cat) => format!("  [{}]", cat.name()),
        None if c.severity == Severity::Improvement => "  [improvement]".to_string(),
        None => String::new(),
    };
    let size = if c.size.changed() {
        format!(", size {} -> {}", c.size.old, c.size.new)
    } else {
        String::new()
    };
    let at = c.placement();
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
            at.old.offset_in_line,
            at.new.offset_in_line,
            at.old.offset_in_pair,
            at.new.offset_in_pair,
            at.old.lines,
            at.new.lines
        ),
    ];
    if c.co_tenants_changed || pinned {
        let written = if c.written_neighbours.is_empty() {
            String::new()
        } else {
            format!(" (written: {})", names(&c.written_neighbours))
        };
        lines.push(format!(
            "      shares lines with: {}  ->  {}{written}",
            tenant_names(c.co_tenants().old),
            tenant_names(c.co_tenants().new)
        ));
    }
    lines.extend(sharing_lines(c));
    // The rule that decided is for --all and --explain; the evidence always shows.
    let evidence = c
        .evidence
        .map_or_else(|| "none".to_string(), |e| e.to_string());
    lines.push(if all || pinned {
        format!("      evidence: {evidence}; {}", c.decision.rule)
    } else {
        format!("      evidence: {evidence}")
    });
    lines.extend(member_moves(c, all || pinned));
    lines
}

/// The members' lines: each member's, line by line, in full (`--all`, pinned), else
/// the members that change line on one line, hot ones first.
fn member_moves(c: &PlacementChange, full: bool) -> Vec<String> {
    let mut lines = Vec::new();
    if full {
        for m in &c.member_lines {
            let hot = m.evidence.map(|e| format!("  [{e}]")).unwrap_or_default();
            lines.push(format!(
                "      member {} now on line {} (was {}){hot}",
                m.name,
                opt(m.line.new),
                opt(m.line.old)
            ));
        }
    } else if !c.member_lines.is_empty() {
        let mut ordered: Vec<&layout_diff_core::diff::MemberLines> =
            c.member_lines.iter().collect();
        ordered.sort_by_key(|m| m.evidence.is_none());
        let moves: Vec<String> = ordered
            .iter()
            .map(|m| {
                let hot = if m.evidence.is_some() { " (hot)" } else { "" };
                match m.line.old {
                    Some(old) => format!("{}{hot} {old}->{}", m.name, opt(m.line.new)),
                    None => format!("{}{hot} (new) {}", m.name, opt(m.line.new)),
                }
            })
            .collect();
        lines.push(format!("      members changing line: {}", names(&moves)));
    }
    lines
}

/// The lines where a hot member of the object now meets another object's written
/// member (a flagged or possible item), or where its hot members are now alone (an
/// improvement).
fn sharing_lines(c: &PlacementChange) -> Vec<String> {
    use super::plan::MEETINGS_SHOWN;
    let Some(sh) = &c.sharing else {
        return Vec::new();
    };
    let mut out: Vec<String> = sh
        .new_meetings
        .iter()
        .take(MEETINGS_SHOWN)
        .map(|m| format!("      {}", meeting(m, c.space)))
        .collect();
    if sh.new_meetings.len() > MEETINGS_SHOWN {
        out.push(format!(
            "      (+{} more meetings: --explain {})",
            sh.new_meetings.len() - MEETINGS_SHOWN,
            c.name
        ));
    }
    if c.severity == Severity::Improvement && !sh.hot_now_alone() && sh.gone > 0 {
        out.push(format!(
            "      {} meeting(s) of a hot member with a written member ended (line or pair)",
            sh.gone
        ));
    }
    if c.severity == Severity::Improvement && sh.hot_now_alone() {
        let alone: Vec<String> = sh
            .new
            .hot
            .iter()
            .map(|h| format!("{} {:#x}..{:#x}", h.member.name, h.member.from, h.member.to))
            .collect();
        out.push(format!(
            "      hot now alone on its lines: {}",
            names(&alone)
        ));
    }
    out
}

/// One meeting, on one line: `line ADDR: hot M 0x0..0x4 with N's W 0x8..0x10, written
/// by f()`.
pub(crate) fn meeting(
    m: &layout_diff_core::diff::lines::Meeting,
    space: layout_diff_core::model::Space,
) -> String {
    let pair = if m.adjacent {
        format!(" (pair of {})", crate::place_str(space, m.neighbour_line))
    } else {
        String::new()
    };
    let by = match m.hot.hot {
        Some(layout_diff_core::diff::lines::Hot::Writer { function, .. }) => {
            format!(" (written by {function}())")
        }
        _ => String::new(),
    };
    format!(
        "line {}{pair}: hot {} {:#x}..{:#x}{by} with {}'s {} {:#x}..{:#x}, {}",
        crate::place_str(space, m.line),
        m.hot.name,
        m.hot.from,
        m.hot.to,
        m.neighbour,
        m.written.name,
        m.written.from,
        m.written.to,
        m.written.written.map_or_else(String::new, |w| w.short())
    )
}

pub(crate) fn opt(v: Option<u64>) -> String {
    v.map_or("-".into(), |x| x.to_string())
}

/// `5240`, or `2344:1` for a bitfield (byte offset and bit), or `-` when absent.
pub(crate) fn position(offset: Option<u64>, bit: Option<u64>) -> String {
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

pub(crate) fn member_line(m: &MemberChange) -> String {
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
                s.push_str(&format!(
                    ", size {} -> {}",
                    opt(m.size.old),
                    opt(m.size.new)
                ));
            }
            if m.type_name.changed() {
                s.push_str(&format!(
                    ", type {} -> {}",
                    m.type_name.old.as_deref().unwrap_or("-"),
                    m.type_name.new.as_deref().unwrap_or("-")
                ));
            }
            if m.line.changed() {
                s.push_str(&format!(
                    " (line {} -> {})",
                    opt(m.line.old),
                    opt(m.line.new)
                ));
            }
            s
        }
    }
}

/// One member change in a few words: `+kstack_offset@5240`, `~rethooks 5248->5256 (line 81->82)`.
pub(crate) fn member_short(m: &MemberChange) -> String {
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
    let boundaries = super::plan::boundaries(s);
    for (i, m) in s.layout.iter().enumerate() {
        if let Some((_, l)) = boundaries.iter().find(|(at, _)| *at == i) {
            out.push(format!("\t/* --- cacheline {l} boundary --- */"));
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

fn struct_lines(s: &StructChange, ms: &[&MemberChange], detail: Detail) -> Vec<String> {
    let (pinned, all) = (detail.pinned, detail.all);
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
        "  {} {} ({} -> {} B, {}{align}, holes {} -> {} B, padding {} -> {}{inst})",
        s.kind,
        s.name,
        s.size.old,
        s.size.new,
        lines_pair(s.cachelines.old, s.cachelines.new),
        s.sum_holes.old,
        s.sum_holes.new,
        s.padding.old,
        s.padding.new
    )];
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
    if let Some(sh) = &s.sharing {
        let keep = if all || pinned { usize::MAX } else { 2 };
        for (what, list) in [("new meeting", &sh.new_meetings), ("ended", &sh.ended)] {
            lines.extend(list.iter().take(keep).map(|m| struct_meeting(what, m)));
            if list.len() > keep {
                lines.push(format!(
                    "      (+{} more: --explain {})",
                    list.len() - keep,
                    s.name
                ));
            }
        }
        let shown: Vec<String> = sh
            .footprints
            .iter()
            .take(keep.min(3))
            .map(|f| format!("{}() {} -> {}", f.function, f.old.len(), f.new.len()))
            .collect();
        if !shown.is_empty() {
            lines.push(format!(
                "      lines touched by hot functions: {}",
                shown.join(", ")
            ));
        }
    }
    lines
}

/// One meeting of a struct's lines: `new meeting on line 1: d_lockref.count 0x5c..0x60
/// (written by dput(), frequent: known hot) with d_op 0x60..0x68 (read by ...)`.
pub(crate) fn struct_meeting(what: &str, m: &layout_diff_core::diff::StructMeeting) -> String {
    format!(
        "      {what} on line {}: {} {:#x}..{:#x} (written by {}(), {}) with {} {:#x}..{:#x} ({} by \
         {}(), {})",
        m.line,
        m.written,
        m.written_from,
        m.written_to,
        m.writer,
        m.writer_why,
        m.other,
        m.other_from,
        m.other_to,
        if m.toucher_writes { "written" } else { "read" },
        m.toucher,
        m.toucher_why
    )
}

/// One changed cache-line group: `group rx: 20+20 B, 1 line -> 20+76 B, 2 lines, +rx_dropped`.
pub(crate) fn group_line(g: &layout_diff_core::diff::GroupChange) -> String {
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
pub(crate) fn function_line(c: &FunctionChange, line_size: u64) -> String {
    let why = match (c.flagged, c.evidence) {
        (true, Some(e)) => format!("  [flagged: text; {e}]"),
        (true, None) => "  [flagged: text; asked for by name]".to_string(),
        (false, Some(e)) => format!("  [{}, not flagged]", e.strength().name()),
        (false, None) => String::new(),
    };
    format!(
        "  {}  {:016x} -> {:016x}  mod {line_size} {:#04x} -> {:#04x}, lines {} -> {}{why}",
        c.name, c.address.old, c.address.new, c.phase.old, c.phase.new, c.lines.old, c.lines.new
    )
}
pub(crate) fn build(b: &Option<String>) -> String {
    b.as_deref().map_or("no build-id".to_string(), |b| {
        format!("build-id {}", &b[..b.len().min(12)])
    })
}

/// The closing line: what the exit code means here, and what the line budget left
/// out or shortened: flagged items first (`N more flagged: --all`), then the rest.
pub(crate) fn closing(p: &Plan<'_>) -> String {
    let r = p.report;
    let brief = p.flagged_short() - p.flagged_cut;
    let rest = p.cut - p.flagged_cut;
    let mut parts = Vec::new();
    if p.flagged_cut > 0 {
        parts.push(format!("{} more flagged: --all", p.flagged_cut));
    }
    if brief > 0 {
        parts.push(format!(
            "{} on one line each",
            count(brief, "flagged item", "flagged items")
        ));
    }
    if rest > 0 {
        parts.push(format!("{rest} more items cut, --all prints them"));
    }
    let more = if parts.is_empty() {
        String::new()
    } else {
        format!("{} ", parts.join("; "))
    };
    let cats: Vec<&str> = r.fail_on.iter().map(|c| c.name()).collect();
    let code = u8::from(r.failing > 0);
    format!(
        "exit {code}: {} flagged on evidence, {} in --fail-on ({})\n{more}\
(--explain NAME says why; --format json for all data)",
        count(r.flagged, "change", "changes"),
        r.failing,
        cats.join(",")
    )
}

/// Which `--fail-on` categories make the exit status 1, with how many changes in
/// each (`failing: member 3, neighbour 3`); `None` when nothing fails. Changes the
/// report counts as failing without listing them are given as a remainder.
pub(crate) fn failing_line(r: &Report) -> Option<String> {
    if r.failing == 0 {
        return None;
    }
    let fails = |s: Severity| s.category().filter(|c| r.fail_on.contains(c));
    let mut by: Vec<(layout_diff_core::diff::Category, usize)> = Vec::new();
    let mut tally = |c: Option<layout_diff_core::diff::Category>| {
        if let Some(c) = c {
            match by.iter_mut().find(|(k, _)| *k == c) {
                Some((_, n)) => *n += 1,
                None => by.push((c, 1)),
            }
        }
    };
    r.data
        .iter()
        .chain(&r.percpu)
        .for_each(|c| tally(fails(c.severity)));
    r.structs.iter().for_each(|s| tally(fails(s.severity)));
    r.functions
        .iter()
        .filter(|f| f.flagged)
        .for_each(|f| tally(fails(f.severity)));
    by.sort_by_key(|&(c, _)| r.fail_on.iter().position(|k| *k == c));
    let mut parts: Vec<String> = by
        .iter()
        .map(|(c, n)| format!("{} {n}", c.name()))
        .collect();
    let counted: usize = by.iter().map(|(_, n)| n).sum();
    if counted < r.failing {
        parts.push(format!("{} more", r.failing - counted));
    }
    Some(format!("failing (--fail-on): {}", parts.join(", ")))
}

/// `1 line`, `2 -> 3 lines`, `1 -> 1 line`: a line count before and after.
pub(crate) fn lines_pair(old: u64, new: u64) -> String {
    let word = if old == 1 && new == 1 {
        "line"
    } else {
        "lines"
    };
    format!("{old} -> {new} {word}")
}

/// `1 change`, `2 changes`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// How many objects only lost neighbours, when any did.
pub(crate) fn improvements_line(r: &Report) -> Option<String> {
    let (d, p) = (r.summary.data.improvements, r.summary.percpu.improvements);
    (d + p > 0).then(|| {
        format!(
            "improvements (fewer neighbours or now line-aligned; hot ones listed, --all lists all): {d} data, {p} per-CPU"
        )
    })
}

/// What is counted rather than listed, by pattern: one line for type guesses, one
/// for cold storage, each with its five largest patterns (`totals_only`: without
/// them).
pub(crate) fn pattern_lines(patterns: &[PatternCount], totals_only: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, label) in [
        (
            PatternKind::Possible,
            "possible (a type guess gained a written neighbour; not flagged, --fail-on possible)",
        ),
        (
            PatternKind::Cold,
            "cold by convention (gained neighbours or lines; never flagged)",
        ),
    ] {
        let list: Vec<&PatternCount> = patterns.iter().filter(|p| p.kind == kind).collect();
        if list.is_empty() {
            continue;
        }
        let total: usize = list.iter().map(|p| p.count).sum();
        let top: Vec<String> = list
            .iter()
            .take(5)
            .map(|p| format!("{} {}", p.what, p.count))
            .collect();
        let rest = list.len().saturating_sub(5);
        let more = if rest > 0 {
            format!(", {rest} more patterns")
        } else {
            String::new()
        };
        out.push(format!("  {label}: {total}"));
        if !totals_only {
            out.push(format!("      {}{more}", top.join(", ")));
        }
    }
    out
}

/// Which storage is never judged hot by its type, grouped by what it is.
pub(crate) fn quiet_line(r: &Report) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for q in &r.quiet_regions {
        let from = q.from.strip_prefix("sections ").unwrap_or(&q.from);
        match groups.iter_mut().find(|(w, _)| *w == q.what) {
            Some((_, list)) => list.push(from),
            None => groups.push((q.what, vec![from])),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(what, from)| format!("{what} ({})", from.join(", ")))
        .collect();
    format!("not judged by type: {}", parts.join("; "))
}

/// What each column of the summary counts.
pub(crate) fn legend() -> &'static str {
    "changed: place, size or line neighbours changed; flagged: for the worse, and with evidence of hot;\n\
     moved in line: offset in line (functions: start mod line); shift runs: shifts that change lines"
}

/// One root change: what it is, what it moved, the hot objects among them.
fn cause_lines(c: &RootCause) -> Vec<String> {
    let mut moved = format!("{} moved across lines", count(c.moved, "object", "objects"));
    if c.moved_whole_lines > 0 {
        moved.push_str(&format!(", {} by whole lines", c.moved_whole_lines));
    }
    let space = match (c.global, c.percpu) {
        (true, true) => "data and per-CPU",
        (false, true) => "per-CPU",
        _ => "data",
    };
    let mut out = vec![format!(
        "  {}: {moved} ({space}, {}), {} hot",
        c.what,
        count(c.runs.len(), "run", "runs"),
        c.hot
    )];
    if !c.hot_names.is_empty() {
        out.push(format!("      hot: {}", names(&c.hot_names)));
    }
    out
}

/// The lines of one planned item (a brief one: `brief_line`).
pub(crate) fn item_lines(item: &Item<'_>) -> Vec<String> {
    if let Some(line) = brief_line(item) {
        return vec![line];
    }
    match item {
        Item::Cause(c) => cause_lines(c),
        Item::Run(r) => vec![format!("  {}", run_line(r))],
        Item::Placement { change, detail } => placement_lines(change, *detail),
        Item::Struct {
            change,
            members,
            detail,
        } => struct_lines(change, members, *detail),
    }
}

/// A brief item's one line (`Detail::brief`: a flagged item the line budget has no
/// room for in full), short enough for one row of a terminal where names allow:
/// `  vm_committed_as (struct percpu_counter, 40 B)  +0x428580  [flagged: neighbour]`,
/// `  struct rq (3264 -> 3456 B, 51 -> 54 lines)  [flagged: member]`.
fn brief_line(item: &Item<'_>) -> Option<String> {
    let flag = |s: Severity| {
        s.category()
            .map_or_else(String::new, |c| format!("  [flagged: {}]", c.name()))
    };
    match item {
        Item::Placement { change: c, detail } if detail.brief => {
            let ty = match &c.type_name {
                Some(t) => format!("{t}, {} B", c.size.new),
                None => format!("{} B", c.size.new),
            };
            Some(format!(
                "  {} ({ty})  {}{}",
                c.name,
                signed(c.delta),
                flag(c.severity)
            ))
        }
        Item::Struct {
            change: s, detail, ..
        } if detail.brief => Some(format!(
            "  {} {} ({} -> {} B, {}){}",
            s.kind,
            s.name,
            s.size.old,
            s.size.new,
            lines_pair(s.cachelines.old, s.cachelines.new),
            flag(s.severity)
        )),
        _ => None,
    }
}

/// The lines of the closing `text` section.
pub(crate) fn text_lines(t: &TextSection<'_>, line_size: u64) -> Vec<String> {
    let f = t.counts;
    let flagged = if f.flagged > 0 {
        format!("{} measured hot or asked for, flagged", f.flagged)
    } else {
        "none measured hot or asked for".to_string()
    };
    let mut out = vec![format!(
        "  {} changed their start mod {line_size} ({flagged}); {} change line membership, {} shift by whole lines",
        count(f.line_offset_changed, "function", "functions"),
        count(f.runs, "run", "runs"),
        f.whole_line_runs
    )];
    if !t.runs.is_empty() {
        out.push("  largest runs:".to_string());
    }
    for run in &t.runs {
        out.push(format!("  {}", run_line(run)));
    }
    for FunctionItem { change, run } in &t.functions {
        out.push(function_line(change, line_size));
        if let Some(run) = run {
            out.push(format!(
                "      in a run of {} moved {}: {}",
                run.count,
                signed(run.delta),
                cause(&run.cause, run.previous_delta)
            ));
        }
    }
    out
}

/// Every titled block of lines the text and Markdown reports print, in the plan's
/// order (`Plan::parts`: the parts with a flagged item first), then what is counted by
/// pattern.
pub(crate) fn blocks(p: &Plan<'_>) -> Vec<(&'static str, Vec<String>)> {
    let section = |s: &Section<'_>| (s.title, s.items.iter().flat_map(item_lines).collect());
    let mut out: Vec<(&'static str, Vec<String>)> = p
        .parts()
        .into_iter()
        .map(|part| match part {
            Part::Section(s) => section(s),
            Part::Functions(t) => ("functions", text_lines(t, p.report.line_size)),
        })
        .collect();
    let patterns = pattern_lines(p.patterns, p.view.bare);
    if !patterns.is_empty() {
        out.push(("the rest, counted by pattern", patterns));
    }
    out
}
