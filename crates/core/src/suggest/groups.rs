//! Fixes for cache-line groups that touch more lines than before: when the group
//! still fits in as many lines as its size needs, its start aligned to a line
//! (`__cacheline_group_begin_aligned`, Linux 6.8+), laid out by `whatif`'s types and
//! checked by diffing the predicted build against OLD again; when it has outgrown the
//! lines it had, by how many bytes, and the members that could leave it: those added
//! or grown in it, or the smallest one at least as large as the excess (else the
//! fewest trailing ones), declared after its end marker, each checked the same way.

use rayon::prelude::*;
use serde::Serialize;

use crate::diff::{GroupChange, MemberChangeKind, StructChange};
use crate::layout::groups::groups;
use crate::whatif::Change;

/// One candidate fix for one group, checked.
#[derive(Debug, Clone, Serialize)]
pub struct GroupFix {
    /// The change, as `whatif` takes it.
    pub change: String,
    /// The marker declaration to paste in place of `__cacheline_group_begin(G)`.
    pub declaration: String,
    /// Whether the predicted diff against OLD no longer flags the group.
    pub restores: bool,
    /// Lines the group touches after the change.
    pub lines: u64,
    /// Bytes the change adds to each instance, and the instances in the build.
    pub instance_bytes: i64,
    /// Instances of the struct in the build.
    pub instances: usize,
    /// Flags in the whole predicted diff against OLD.
    pub flags_after: usize,
}

/// One flagged group, with its fix or what keeps it from fitting.
#[derive(Debug, Clone, Serialize)]
pub struct GroupSuggestion {
    /// The struct.
    #[serde(rename = "struct")]
    pub struct_name: String,
    /// The group's name.
    pub group: String,
    /// Offset (from the struct's start), size and lines, OLD then NEW.
    pub offset_old: u64,
    /// Its offset in NEW.
    pub offset_new: u64,
    /// Its size in OLD.
    pub size_old: u64,
    /// Its size in NEW.
    pub size_new: u64,
    /// The lines it spans in OLD.
    pub lines_old: u64,
    /// The lines it spans in NEW.
    pub lines_new: u64,
    /// Lines its size needs when it starts a line: ceil(size / line).
    pub lines_needed: u64,
    /// Bytes it has beyond what its OLD line count holds, when it has outgrown them.
    pub exceeds_by: Option<u64>,
    /// Members added to it, or grown in it, since OLD.
    pub added_or_grown: Vec<String>,
    /// The fixes, each checked by a prediction.
    pub fixes: Vec<GroupFix>,
    /// A `check` rule that keeps it within its lines.
    pub rule: String,
}

/// The suggestions for every flagged group of every flagged struct.
pub fn suggest_groups(
    new: &super::base::Base<'_, '_>,
    structs: &[StructChange],
) -> Vec<GroupSuggestion> {
    let todo: Vec<(&StructChange, &GroupChange)> = structs
        .iter()
        .filter(|s| s.severity.flagged())
        .flat_map(|s| s.groups.iter().filter(|g| g.flagged).map(move |g| (s, g)))
        .collect();
    // Each is one prediction and one whole diff: side by side, in report order.
    todo.into_par_iter()
        .filter_map(|(s, g)| for_group(new, s, g))
        .collect()
}

fn for_group(
    new: &super::base::Base<'_, '_>,
    s: &StructChange,
    g: &GroupChange,
) -> Option<GroupSuggestion> {
    let line = new.line_size.max(1);
    let name = &s.name;
    let (_, layout) = new
        .structs_named(|n| n == name)
        .find(|(_, l)| l.size == s.size.new)?;
    let now = groups(layout, line)
        .into_iter()
        .find(|x| x.name == g.name)?;
    let (offset_old, size_old, lines_old) = (
        g.offset.old.unwrap_or(0),
        g.size.old.unwrap_or(0),
        g.lines.old.unwrap_or(0),
    );
    let needed = now.size.div_ceil(line);
    let capacity = lines_old.saturating_mul(line);
    let exceeds_by = (now.size > capacity).then(|| now.size - capacity);
    let added_or_grown: Vec<String> = s
        .members
        .iter()
        .filter(|m| now.members.contains(&m.name))
        .filter(|m| {
            m.kinds.contains(&MemberChangeKind::Added)
                || matches!((m.size.old, m.size.new), (Some(a), Some(b)) if b > a)
        })
        .map(|m| m.name.clone())
        .collect();
    let instances = super::instances_of(new, name.as_str());
    let mut fixes = Vec::new();
    if exceeds_by.is_none() && (now.lines > needed || !now.line_aligned) {
        fixes.extend(align_group(new, (name, &g.name), layout, instances));
    }
    if let Some(over) = exceeds_by {
        fixes.extend(leave(new, (name, &g.name), over, &added_or_grown));
    }
    // Restoring first; among equals, in the order tried.
    fixes.sort_by_key(|f| !f.restores);
    let rule = group_rule((name, &g.name), exceeds_by.is_some(), lines_old, capacity);
    Some(GroupSuggestion {
        struct_name: name.clone(),
        group: g.name.clone(),
        offset_old,
        offset_new: now.offset,
        size_old,
        size_new: now.size,
        lines_old,
        lines_new: now.lines,
        lines_needed: needed,
        exceeds_by,
        added_or_grown,
        fixes,
        rule,
    })
}

/// The fix that aligns group `group` of struct `name` (`layout` in NEW) to a line,
/// predicted and diffed; none when the prediction fails or loses the group.
fn align_group(
    new: &super::base::Base<'_, '_>,
    (name, group): (&str, &str),
    layout: &crate::model::StructLayout<'_>,
    instances: usize,
) -> Option<GroupFix> {
    let change = Change::MemberAlign {
        name: name.to_string(),
        member: format!("__cacheline_group_begin__{group}"),
        align: new.line_size.max(1),
    };
    let declaration = format!("/* struct {name} */ __cacheline_group_begin_aligned({group});");
    let fixed = Fixed {
        name,
        group,
        layout,
        instances,
    };
    fixed.predicted(new, vec![change], declaration)
}

/// A struct's group as a fix moves it: what `predicted` needs besides the builds.
struct Fixed<'l, 'd> {
    name: &'l str,
    group: &'l str,
    /// The struct's layout in NEW.
    layout: &'l crate::model::StructLayout<'d>,
    /// Its instances in NEW, as a fix's cost counts them.
    instances: usize,
}

impl Fixed<'_, '_> {
    /// The fix `changes` (declared as `declaration`), predicted on NEW and diffed
    /// against OLD: the group's lines after it, whether the group's flag goes, and what
    /// the struct's instances pay; none when the prediction fails or loses the group.
    fn predicted(
        &self,
        new: &super::base::Base<'_, '_>,

        changes: Vec<Change>,
        declaration: String,
    ) -> Option<GroupFix> {
        let (name, group, line) = (self.name, self.group, new.line_size.max(1));
        let p = new.predict(&changes).ok()?;
        let (_, relaid) = p
            .image
            .structs_named(|n| n == name)
            .find(|(_, l)| groups(l, line).iter().any(|x| x.name == group))?;
        let lines = groups(relaid, line)
            .into_iter()
            .find(|x| x.name == group)
            .map_or(0, |x| x.lines);
        let after = new.judge(&p.image);
        let still = after
            .structs
            .iter()
            .find(|x| x.name == name)
            .is_some_and(|x| x.groups.iter().any(|y| y.name == group && y.flagged));
        Some(GroupFix {
            change: super::changes_args(&changes),
            declaration,
            restores: !still,
            lines,
            instance_bytes: relaid.size as i64 - self.layout.size as i64,
            instances: self.instances,
            flags_after: after.flagged,
        })
    }
}

/// The check rule that keeps group `group` of struct `name` within the `lines_old`
/// lines it fit before, or, when it `exceeds` them, within their `capacity` bytes.
fn group_rule((name, group): (&str, &str), exceeds: bool, lines_old: u64, capacity: u64) -> String {
    match exceeds {
        false => format!(
            "[group.\"{name}.{group}\"]\nmax_lines = {lines_old}\naligned = true\nwhy = \"a hot group kept within its lines (layout-diff suggest)\"\n",
        ),
        true => format!(
            "[group.\"{name}.{group}\"]\nmax_size = {capacity}\nwhy = \"the group fit {lines_old} line{} before (layout-diff suggest); fails until it shrinks\"\n",
            if lines_old == 1 { "" } else { "s" }
        ),
    }
}

/// Members leaving group `g` of struct `name` that outgrew its OLD lines by `over`
/// bytes: those added or grown in it (what pushed it over); the smallest member at
/// least as large as the excess (the last declared among equals), or when none is,
/// the fewest trailing members that free it. Each set is declared after the group's
/// end marker, predicted and diffed against OLD.
fn leave(
    new: &super::base::Base<'_, '_>,
    (name, g): (&str, &str),
    over: u64,
    added_or_grown: &[String],
) -> Vec<GroupFix> {
    let line = new.line_size.max(1);
    let Some((layout, group)) = new.structs_named(|n| n == name).find_map(|(_, l)| {
        groups(l, line)
            .into_iter()
            .find(|x| x.name == g)
            .map(|x| (l, x))
    }) else {
        return Vec::new();
    };
    let members = super::structs::group_members(layout, &group.members);
    let mut sets: Vec<Vec<&str>> = Vec::new();
    let pushed: Vec<&str> = members
        .iter()
        .filter_map(|m| m.name)
        .filter(|n| added_or_grown.iter().any(|a| a == n))
        .collect();
    if !pushed.is_empty() {
        sets.push(pushed);
    }
    let singles = super::structs::smallest_first(&members, over);
    if let Some(n) = singles.first().and_then(|m| m.name)
        && !sets.iter().any(|x| x.as_slice() == [n])
    {
        sets.push(vec![n]);
    }
    if singles.is_empty()
        && let Some(set) = super::structs::trailing(&members, over)
    {
        // No one member is as large: the fewest trailing ones that free the excess.
        let names: Vec<&str> = set.iter().filter_map(|m| m.name).collect();
        if !sets.contains(&names) {
            sets.push(names);
        }
    }
    let fixed = Fixed {
        name,
        group: g,
        layout,
        instances: super::instances_of(new, name),
    };
    let mut found: Vec<(usize, GroupFix)> = sets
        .par_iter()
        .filter_map(|set| {
            let (changes, declaration) = super::structs::out_of_group(layout, name, g, set);
            let fix = fixed.predicted(new, changes, declaration)?;
            Some((set.len(), fix))
        })
        .collect();
    // Fewest members moved first.
    found.sort_by_key(|(n, f)| (!f.restores, *n));
    found.into_iter().map(|(_, f)| f).collect()
}
