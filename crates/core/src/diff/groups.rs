//! Cache-line group changes of a struct between two builds: a group that grew, touches
//! more lines, gained or lost a member, or stopped starting a line; only more lines
//! or a lost line start is flagged.

use super::changes::{GroupChange, Pair};
use crate::layout::{Group, groups};
use crate::model::StructLayout;

/// Changed groups of `old` -> `new`, in new order then groups removed in old order.
pub fn changes(o: &StructLayout<'_>, n: &StructLayout<'_>, line_size: u64) -> Vec<GroupChange> {
    let (go, gn) = (groups(o, line_size), groups(n, line_size));
    let find = |gs: &[Group], name: &str| gs.iter().find(|g| g.name == name).cloned();
    let mut out: Vec<GroupChange> = gn
        .iter()
        .filter_map(|g| change(find(&go, &g.name).as_ref(), Some(g)))
        .collect();
    out.extend(
        go.iter()
            .filter(|g| find(&gn, &g.name).is_none())
            .filter_map(|g| change(Some(g), None)),
    );
    out
}

fn change(o: Option<&Group>, n: Option<&Group>) -> Option<GroupChange> {
    let name = n.or(o)?.name.clone();
    let f = |g: Option<&Group>, v: fn(&Group) -> u64| g.map(v);
    let members = |g: Option<&Group>| g.map(|g| g.members.clone()).unwrap_or_default();
    let (mo, mn) = (members(o), members(n));
    let added_members: Vec<String> = mn.iter().filter(|m| !mo.contains(m)).cloned().collect();
    let removed_members: Vec<String> = mo.iter().filter(|m| !mn.contains(m)).cloned().collect();
    let c = GroupChange {
        name,
        offset: Pair {
            old: f(o, |g| g.offset),
            new: f(n, |g| g.offset),
        },
        size: Pair {
            old: f(o, |g| g.size),
            new: f(n, |g| g.size),
        },
        lines: Pair {
            old: f(o, |g| g.lines),
            new: f(n, |g| g.lines),
        },
        line_aligned: Pair {
            old: o.map(|g| g.line_aligned),
            new: n.map(|g| g.line_aligned),
        },
        flagged: false,
        added_members,
        removed_members,
    };
    // Worse: a group in both builds that now touches more lines or no longer starts
    // one. A group that appeared, or gained members within its lines, is recorded.
    let flagged = o.is_some()
        && n.is_some()
        && (c.lines.new > c.lines.old
            || c.line_aligned
                == (Pair {
                    old: Some(true),
                    new: Some(false),
                }));
    let changed = o.is_none()
        || n.is_none()
        || c.offset.changed()
        || c.size.changed()
        || c.lines.changed()
        || !c.added_members.is_empty()
        || !c.removed_members.is_empty();
    if !changed {
        return None;
    }
    Some(GroupChange { flagged, ..c })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Member;

    fn layout(members: &[(&'static str, u64, u64)]) -> StructLayout<'static> {
        StructLayout {
            name: "netdev_like",
            size: 128,
            alignment: 64,
            members: members
                .iter()
                .map(|&(name, offset, size)| Member {
                    name: Some(name),
                    offset,
                    size,
                    flexible: size == 0,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn grown_group_and_lost_member() {
        let o = layout(&[
            ("__cacheline_group_begin__rx", 20, 0),
            ("rx_packets", 24, 8),
            ("__cacheline_group_end__rx", 32, 0),
            ("__cacheline_group_begin__same", 32, 0),
            ("a", 32, 8),
            ("__cacheline_group_end__same", 40, 0),
        ]);
        let n = layout(&[
            ("__cacheline_group_begin__rx", 20, 0),
            ("rx_dropped", 24, 56),
            ("__cacheline_group_end__rx", 80, 0),
            ("__cacheline_group_begin__same", 80, 0),
            ("a", 80, 8),
            ("__cacheline_group_end__same", 88, 0),
        ]);
        let c = changes(&o, &n, 64);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].name, "rx");
        assert_eq!((c[0].size.old, c[0].size.new), (Some(12), Some(60)));
        assert_eq!((c[0].lines.old, c[0].lines.new), (Some(1), Some(2)));
        assert_eq!(c[0].added_members, ["rx_dropped"]);
        assert_eq!(c[0].removed_members, ["rx_packets"]);
        assert!(c[0].flagged);
        // Moved but same size, lines and members: recorded, not flagged.
        assert_eq!(c[1].name, "same");
        assert!(!c[1].flagged);
        assert!(changes(&o, &o, 64).is_empty());
    }
}
