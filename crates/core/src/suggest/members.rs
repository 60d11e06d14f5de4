//! Fixes for a struct whose hot member moved to another line: the members that grew
//! or were added before it declared after the struct's last member, the hot member
//! declared before them, or the hot member aligned to a line. Each is laid out by
//! `whatif`'s types and checked by diffing the predicted build against OLD again.

use rayon::prelude::*;
use serde::Serialize;

use crate::diff::{MemberChange, MemberChangeKind, Severity, StructChange};
use crate::model::{AggregateKind, Image, StructLayout};
use crate::whatif::Change;
use crate::whatif::nested;

/// One candidate fix for one struct, checked.
#[derive(Debug, Clone, Serialize)]
pub struct MemberFix {
    /// The change, as `whatif` takes it.
    pub change: String,
    /// The changed member declarations, as C to paste.
    pub declaration: String,
    /// Whether the predicted build's struct no longer has a hot member on another line.
    pub restores: bool,
    /// The hot member's line (from the struct's start) after the change; before it
    /// moved it was `MemberSuggestion::line_old`.
    pub line: u64,
    /// Bytes the change adds to each instance, and the instances in the build.
    pub instance_bytes: i64,
    /// Instances of the struct in the build.
    pub instances: usize,
    /// Flags in the whole predicted diff against OLD.
    pub flags_after: usize,
}

/// The fixes for one hot member of one struct, restoring first, then cheapest.
#[derive(Debug, Clone, Serialize)]
pub struct MemberSuggestion {
    /// The struct.
    #[serde(rename = "struct")]
    pub struct_name: String,
    /// The hot member.
    pub member: String,
    /// Its evidence of hotness, as a sentence.
    pub evidence: Option<String>,
    /// Its line (from the struct's start) in OLD.
    pub line_old: u64,
    /// Its line in NEW.
    pub line_new: u64,
    /// The members before it that grew or were added: what pushed it.
    pub pushed_by: Vec<String>,
    /// The fixes, restoring first, then cheapest.
    pub fixes: Vec<MemberFix>,
    /// Why fewer fixes were tried, when they were.
    pub note: Option<String>,
    /// A `check` rule that keeps it with the members it shared its line with.
    pub rule: Option<String>,
}

/// Hot members considered per run (each candidate costs one prediction and one diff).
const MAX_MEMBERS: usize = 8;

/// The suggestions for every struct flagged for a hot member that changed line.
pub fn suggest_members(
    old: &Image<'_>,
    new: &super::base::Base<'_, '_>,
    structs: &[StructChange],
) -> Vec<MemberSuggestion> {
    let mut todo = Vec::new();
    for change in structs.iter().filter(|s| member_target(s)) {
        let Some((_, layout)) = new
            .structs_named(|n| n == change.name)
            .find(|(_, s)| s.size == change.size.new)
        else {
            continue;
        };
        todo.extend(
            change
                .members
                .iter()
                .filter(|m| moved_hot(m))
                .map(|hot| (change, layout, hot)),
        );
    }
    todo.truncate(MAX_MEMBERS);
    // In report order, whatever the thread count.
    todo.into_par_iter()
        .map(|(change, layout, hot)| for_member(old, new, change, layout, hot))
        .collect()
}

/// Whether struct `name` is still flagged in `structs` (a prediction's judgement) for
/// its hot member `hot` changing line.
pub(super) fn still_moved(structs: &[StructChange], name: &str, hot: &str) -> bool {
    structs.iter().find(|s| s.name == name).is_some_and(|s| {
        member_target(s) && s.members.iter().any(|x| x.name == hot && moved_hot(x))
    })
}

/// A struct `suggest` offers member moves for: flagged for sharing (`member`), or with a
/// known or measured hot member that changed line. The diff lists the latter as
/// information, not a flag; `suggest` still offers to put the member back.
pub(super) fn member_target(s: &StructChange) -> bool {
    s.severity == Severity::HotMember
        || s.members.iter().any(|m| {
            moved_hot(m)
                && m.evidence
                    .as_ref()
                    .is_some_and(|e| e.strength >= crate::evidence::Strength::Known)
        })
}

/// A member with evidence whose line differs between the builds.
pub(super) fn moved_hot(m: &MemberChange) -> bool {
    m.evidence.is_some() && matches!((m.line.old, m.line.new), (Some(a), Some(b)) if a != b)
}

fn for_member(
    old: &Image<'_>,
    new: &super::base::Base<'_, '_>,
    change: &StructChange,
    layout: &StructLayout<'_>,
    hot: &MemberChange,
) -> MemberSuggestion {
    let name = &change.name;
    let pushed = pushed_by(change, hot.offset.new.unwrap_or(0));
    let hot_path = nested::find(layout, name, &hot.name)
        .ok()
        .unwrap_or_default();
    let mut candidates: Vec<Candidate> = Vec::new();
    candidates.extend(declare_pushed_last(layout, name, &pushed));
    candidates.extend(declare_hot_first(layout, name, hot, &hot_path, &pushed));
    let note = note(pushed.is_empty(), candidates.is_empty());
    // 3. The hot member on a line of its own.
    candidates.extend((!hot_path.is_empty()).then(|| {
        (
            vec![Change::MemberAlign {
                name: name.clone(),
                member: hot.name.clone(),
                align: new.line_size,
            }],
            format!(
                "/* struct {name} */ {}",
                member_decl(layout, name, &hot.name, " ____cacheline_aligned")
            ),
        )
    }));
    let instances = super::instances_of(new, name.as_str());
    let line = new.line_size.max(1);
    // Each candidate is one prediction and one whole diff: evaluated side by side,
    // kept in candidate order.
    let mut fixes: Vec<MemberFix> = candidates
        .into_par_iter()
        .filter_map(|candidate| member_fix(new, layout, (name, &hot.name), instances, candidate))
        .collect();
    fixes.sort_by_key(|f| (!f.restores, f.instance_bytes.abs(), f.flags_after));
    MemberSuggestion {
        struct_name: name.clone(),
        member: hot.name.clone(),
        evidence: hot.evidence.as_ref().map(|e| e.what.clone()),
        line_old: hot.line.old.unwrap_or(0),
        line_new: hot.line.new.unwrap_or(0),
        pushed_by: pushed.iter().map(|m| m.name.clone()).collect(),
        note,
        rule: together_rule(old, name, &hot.name, hot.offset.old, line),
        fixes,
    }
}

/// Why fewer fixes are tried: nothing pushed the member (`unpushed`), or what pushed
/// it cannot be moved (`unmovable`).
fn note(unpushed: bool, unmovable: bool) -> Option<String> {
    if unpushed {
        Some(
            "no member before it grew or was added: the source moved it (a deliberate reorder?)"
                .to_string(),
        )
    } else if unmovable {
        Some(
            "the members that pushed it cannot be declared after it (a member moves only \
         among the members of its own struct or union, and not after an anonymous \
         one): only aligning it is tried"
                .to_string(),
        )
    } else {
        None
    }
}

/// The fix `changes` (spelled `declaration`) make to hot member `hot` of struct
/// `name` (`layout` in NEW), predicted and diffed; none when the prediction fails or
/// loses the member.
fn member_fix(
    new: &super::base::Base<'_, '_>,

    layout: &StructLayout<'_>,
    (name, hot): (&str, &str),
    instances: usize,
    (changes, declaration): Candidate,
) -> Option<MemberFix> {
    let line = new.line_size.max(1);
    let p = new.predict(&changes).ok()?;
    let (relaid, m) = p.image.structs_named(|n| n == name).find_map(|(_, s)| {
        let at = nested::find(s, name, hot).ok()?;
        Some((s, nested::declaring(s, &at)?.members.get(*at.last()?)?))
    })?;
    let after = new.judge(&p.image);
    let still = still_moved(&after.structs, name, hot);
    Some(MemberFix {
        change: super::changes_args(&changes),
        declaration,
        restores: !still,
        line: m.offset / line,
        instance_bytes: relaid.size as i64 - layout.size as i64,
        instances,
        flags_after: after.flagged,
    })
}

/// A candidate fix: the changes to predict and the declarations they spell.
type Candidate = (Vec<Change>, String);

/// What pushed the hot member at offset `at`: members before it that were added or
/// grew, in offset order.
fn pushed_by(change: &StructChange, at: u64) -> Vec<&MemberChange> {
    let mut pushed: Vec<&MemberChange> = change
        .members
        .iter()
        .filter(|m| m.offset.new.is_some_and(|o| o < at))
        .filter(|m| {
            m.kinds.contains(&MemberChangeKind::Added)
                || matches!((m.size.old, m.size.new), (Some(a), Some(b)) if b > a)
        })
        .collect();
    pushed.sort_by_key(|m| m.offset.new);
    pushed
}

/// Whether the member at `path` is declared in a union.
fn in_union(layout: &StructLayout<'_>, path: &[usize]) -> bool {
    nested::declaring(layout, path).is_some_and(|d| d.kind == AggregateKind::Union)
}

/// Step 1: those that pushed it declared last in the struct or union that declares each
/// (whatif moves a member only among its own aggregate's), in their order; one in
/// a union is left where it is (the order of a union moves nothing). None when one
/// of them cannot be moved.
fn declare_pushed_last(
    layout: &StructLayout<'_>,
    name: &str,
    pushed: &[&MemberChange],
) -> Option<Candidate> {
    let path = |n: &str| nested::find(layout, name, n).ok();
    let mut last_of: Vec<(Vec<usize>, String)> = Vec::new();
    let mut movable = !pushed.is_empty();
    for m in pushed {
        let Some(p) = path(&m.name) else {
            movable = false;
            continue;
        };
        let holder = p[..p.len() - 1].to_vec();
        if in_union(layout, &p) || last_of.iter().any(|(h, _)| *h == holder) {
            continue;
        }
        match nested::declaring(layout, &p)
            .and_then(|d| d.members.last())
            .and_then(|l| l.name)
        {
            Some(last) => last_of.push((holder, last.to_string())),
            None => movable = false,
        }
    }
    if !movable || last_of.is_empty() {
        return None;
    }
    let mut changes = Vec::new();
    let mut c = Vec::new();
    for (holder, last) in &last_of {
        let mut after = last.clone();
        for m in pushed {
            if path(&m.name).is_none_or(|p| p[..p.len() - 1] != holder[..]) {
                continue;
            }
            changes.push(Change::MemberMove {
                name: name.to_string(),
                member: m.name.clone(),
                after: Some(after.clone()),
            });
            c.push(format!(
                "/* struct {name}: declare after {after} */ {}",
                member_decl(layout, name, &m.name, "")
            ));
            after = m.name.clone();
        }
    }
    Some((changes, c.join("\n")))
}

/// Step 2: the hot member (at `hot_path`) declared before the first of those that pushed
/// it in its own aggregate (or before the anonymous struct or union there that holds
/// it); none when none of them is there, or it is in a union.
fn declare_hot_first(
    layout: &StructLayout<'_>,
    name: &str,
    hot: &MemberChange,
    hot_path: &[usize],
    pushed: &[&MemberChange],
) -> Option<Candidate> {
    let hot_in = &hot_path[..hot_path.len().saturating_sub(1)];
    let first_within = pushed
        .iter()
        .filter_map(|m| nested::find(layout, name, &m.name).ok())
        .filter(|p| p.len() > hot_in.len() && p.starts_with(hot_in))
        .map(|p| p[hot_in.len()])
        .min();
    let first = first_within.filter(|_| !in_union(layout, hot_path))?;
    let before = nested::declaring(layout, hot_path).and_then(|d| {
        d.members
            .iter()
            .take(first)
            .rev()
            .filter_map(|m| m.name)
            .find(|n| *n != hot.name)
    });
    let where_ = before.map_or("first".to_string(), |b| format!("after {b}"));
    Some((
        vec![Change::MemberMove {
            name: name.to_string(),
            member: hot.name.clone(),
            after: before.map(str::to_string),
        }],
        format!(
            "/* struct {name}: declare {where_} */ {}",
            member_decl(layout, name, &hot.name, "")
        ),
    ))
}

/// A member's declaration as C (`long int extra[2];`), with `attr` after the name.
pub(super) fn member_decl(
    layout: &StructLayout<'_>,
    name: &str,
    member: &str,
    attr: &str,
) -> String {
    let Some(m) = nested::find(layout, name, member)
        .ok()
        .and_then(|p| nested::declaring(layout, &p)?.members.get(*p.last()?))
    else {
        return format!("/* {member} */");
    };
    let c: &str = &m.ctype.c;
    let (head, dims) = match c.find('[') {
        Some(i) => (c[..i].trim_end(), &c[i..]),
        None => (c, ""),
    };
    let star = if head.ends_with('*') { "" } else { " " };
    format!("{head}{star}{member}{dims}{attr};")
}

/// `[struct.NAME] together = [[member, ...]]`: the hot member and the named members
/// of the struct or union that declares it that shared its line in OLD, so the fix
/// stays in place.
fn together_rule(
    old: &Image<'_>,
    name: &str,
    member: &str,
    offset: Option<u64>,
    line: u64,
) -> Option<String> {
    let offset = offset?;
    let (layout, at) = old
        .structs_named(|n| n == name)
        .find_map(|(_, s)| Some((s, nested::find(s, name, member).ok()?)))?;
    let mates: Vec<String> = nested::declaring(layout, &at)?
        .members
        .iter()
        .filter(|m| m.size > 0 && m.offset / line == offset / line)
        .filter_map(|m| m.name)
        .filter(|n| *n != member)
        .take(3)
        .map(|n| format!("\"{n}\""))
        .collect();
    if mates.is_empty() {
        return None;
    }
    Some(format!(
        "[struct.\"{name}\"]\ntogether = [[\"{member}\", {}]]\nwhy = \"a hot member kept on the line it shared (layout-diff suggest)\"\n",
        mates.join(", ")
    ))
}
