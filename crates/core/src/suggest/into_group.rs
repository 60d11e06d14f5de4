//! A hot member pushed off the line it shared with a cache-line group's members, in a
//! struct that has groups, offered a place inside that group: declared after the
//! group's last member, before its end marker. Laid out by `whatif`'s types and checked
//! by diffing the predicted build against OLD again, as `members.rs` checks its fixes,
//! whose list it joins.

use crate::diff::StructChange;
use crate::layout::groups::{END, groups};
use crate::model::{Image, StructLayout};
use crate::whatif::Change;

use super::members::{MemberFix, MemberSuggestion, member_decl, still_moved};

/// Adds the "declare it inside group G" fix to each suggestion whose hot member is
/// in no group of NEW and shared its OLD line with members of a group.
pub(super) fn add_fixes(
    old: &Image<'_>,
    new: &super::base::Base<'_, '_>,
    structs: &[StructChange],
    found: &mut [MemberSuggestion],
) {
    let line = new.line_size.max(1);
    for s in found.iter_mut() {
        let Some(change) = structs
            .iter()
            .find(|c| c.name == s.struct_name && super::members::member_target(c))
        else {
            continue;
        };
        let Some((_, now)) = new
            .structs_named(|n| n == change.name)
            .find(|(_, l)| l.size == change.size.new)
        else {
            continue;
        };
        let Some((_, was)) = old
            .structs_named(|n| n == change.name)
            .find(|(_, l)| l.size == change.size.old)
        else {
            continue;
        };
        for (group, last) in candidates(was, now, &s.member, line) {
            if let Some(fix) = check(new, now, &s.member, &group, &last) {
                s.fixes.push(fix);
            }
        }
        s.fixes
            .sort_by_key(|f| (!f.restores, f.instance_bytes.abs(), f.flags_after));
    }
}

/// The groups of NEW whose members shared `member`'s line in OLD, each with the
/// member to declare it after (its last top-level member, else its begin marker);
/// none when `member` is in a group of NEW or not a top-level member.
fn candidates(
    was: &StructLayout<'_>,
    now: &StructLayout<'_>,
    member: &str,
    line: u64,
) -> Vec<(String, String)> {
    let in_now = groups(now, line);
    if in_now.iter().any(|g| g.members.iter().any(|m| m == member))
        || !now.members.iter().any(|m| m.name == Some(member))
    {
        return Vec::new();
    }
    let Some(at) = was.members.iter().find(|m| m.name == Some(member)) else {
        return Vec::new();
    };
    let its_line = at.offset / line;
    let mates = |g: &crate::layout::Group| {
        g.members.iter().any(|n| {
            was.flat_members().iter().any(|(_, m)| {
                m.name == Some(n.as_str()) && m.size > 0 && m.offset / line == its_line
            })
        })
    };
    let mut out = Vec::new();
    for g in groups(was, line).iter().filter(|g| mates(g)) {
        if !in_now.iter().any(|x| x.name == g.name) {
            continue;
        }
        let end = format!("{END}{}", g.name);
        let Some(end_at) = now
            .members
            .iter()
            .position(|m| m.name == Some(end.as_str()))
        else {
            continue;
        };
        // The top-level member declared right before the end marker.
        let Some(last) = now.members[..end_at].iter().rev().find_map(|m| m.name) else {
            continue;
        };
        out.push((g.name.clone(), last.to_string()));
    }
    out
}

/// `member` declared after `last` inside `group`, predicted and diffed against OLD.
fn check(
    new: &super::base::Base<'_, '_>,

    now: &StructLayout<'_>,
    member: &str,
    group: &str,
    last: &str,
) -> Option<MemberFix> {
    let name = now.name;
    let change = Change::MemberMove {
        name: name.to_string(),
        member: member.to_string(),
        after: Some(last.to_string()),
    };
    let p = new.predict(std::slice::from_ref(&change)).ok()?;
    let (_, relaid) = p
        .image
        .structs_named(|n| n == name)
        .find(|(_, s)| s.members.iter().any(|m| m.name == Some(member)))?;
    let m = relaid.members.iter().find(|m| m.name == Some(member))?;
    let after = new.judge(&p.image);
    let still = still_moved(&after.structs, name, member);
    let instances = super::instances_of(new, name);
    Some(MemberFix {
        change: super::change_args(&change),
        declaration: format!(
            "/* struct {name}: declare inside group {group}, after {last} (before __cacheline_group_end({group})) */ {}",
            member_decl(now, name, member, "")
        ),
        restores: !still,
        line: m.offset / new.line_size.max(1),
        instance_bytes: relaid.size as i64 - now.size as i64,
        instances,
        flags_after: after.flagged,
    })
}
