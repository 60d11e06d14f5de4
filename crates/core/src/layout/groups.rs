//! Cache-line groups (Linux 6.8+): the zero-size members `__cacheline_group_begin__G`
//! and `__cacheline_group_end__G` bracket the hot members of a struct; this finds each
//! group's span the way the kernel's `CACHELINE_ASSERT_GROUP_SIZE` measures it (from
//! the end of the begin marker to the end marker) and the lines it touches.

use serde::Serialize;

use crate::model::StructLayout;

/// The prefix of a group's begin marker member (`__cacheline_group_begin__G`).
pub const BEGIN: &str = "__cacheline_group_begin__";
/// The prefix of its end marker member.
pub const END: &str = "__cacheline_group_end__";

/// One group of a struct laid at offset 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    /// The group's name.
    pub name: String,
    /// Offset of the end of the begin marker (markers take no room: its offset).
    pub offset: u64,
    /// Bytes from `offset` to the end marker.
    pub size: u64,
    /// Lines touched (0 for an empty group).
    pub lines: u64,
    /// First line touched, from the struct's offset 0.
    pub first_line: u64,
    /// The begin marker starts a line (what `__cacheline_group_begin_aligned` asks for).
    pub line_aligned: bool,
    /// Named members inside the group, in layout order (markers left out).
    pub members: Vec<String>,
}

/// True for a group marker member (begin or end).
pub fn is_marker(name: &str) -> bool {
    name.starts_with(BEGIN) || name.starts_with(END)
}

/// The groups of `layout`, in order of their begin markers. A begin marker without
/// an end marker (or an end before its begin) is not a group and is left out.
pub fn groups(layout: &StructLayout<'_>, line_size: u64) -> Vec<Group> {
    let flat = layout.flat_members();
    let named = || {
        flat.iter()
            .filter_map(|(_, m)| Some((m.name?, m)))
            .filter(|(_, m)| m.nested.is_none())
    };
    let mut out = Vec::new();
    for (name, begin) in named() {
        let Some(g) = name.strip_prefix(BEGIN) else {
            continue;
        };
        let end_name = format!("{END}{g}");
        let Some((_, end)) = named().find(|(n, _)| *n == end_name) else {
            continue;
        };
        let start = begin.offset.saturating_add(begin.size);
        let Some(size) = end.offset.checked_sub(start) else {
            continue;
        };
        let lines = if size == 0 {
            0
        } else {
            (start + size - 1) / line_size - start / line_size + 1
        };
        let members = named()
            .filter(|(n, m)| !is_marker(n) && m.offset >= start && m.offset < end.offset)
            .map(|(n, _)| n.to_string())
            .collect();
        out.push(Group {
            name: g.to_string(),
            offset: start,
            size,
            lines,
            first_line: start / line_size,
            line_aligned: begin.offset.is_multiple_of(line_size),
            members,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Member;

    fn m(name: &'static str, offset: u64, size: u64) -> Member<'static> {
        Member {
            name: Some(name),
            offset,
            size,
            flexible: size == 0,
            ..Default::default()
        }
    }

    fn layout(members: Vec<Member<'static>>) -> StructLayout<'static> {
        StructLayout {
            name: "netdev_like",
            size: 128,
            alignment: 64,
            members,
            ..Default::default()
        }
    }

    #[test]
    fn groups_as_pahole_shows_the_markers() {
        // base.elf's struct netdev_like (testdata/check/FACTS.md).
        let s = layout(vec![
            m("__cacheline_group_begin__tx_read", 0, 0),
            m("tx_queue", 0, 8),
            m("tx_bytes", 8, 8),
            m("tx_flags", 16, 4),
            m("__cacheline_group_end__tx_read", 20, 0),
            m("__cacheline_group_begin__rx", 20, 0),
            m("rx_packets", 24, 8),
            m("rx_bytes", 32, 8),
            m("__cacheline_group_end__rx", 40, 0),
            m("ifindex", 40, 4),
        ]);
        let g = groups(&s, 64);
        assert_eq!(g.len(), 2);
        assert_eq!(
            (g[0].name.as_str(), g[0].offset, g[0].size, g[0].lines),
            ("tx_read", 0, 20, 1)
        );
        assert!(g[0].line_aligned);
        assert_eq!(g[0].members, ["tx_queue", "tx_bytes", "tx_flags"]);
        assert_eq!(
            (g[1].name.as_str(), g[1].offset, g[1].size, g[1].lines),
            ("rx", 20, 20, 1)
        );
        assert!(!g[1].line_aligned);
        assert_eq!(g[1].members, ["rx_packets", "rx_bytes"]);
    }

    #[test]
    fn group_across_a_boundary_and_unmatched_markers() {
        let s = layout(vec![
            m("__cacheline_group_begin__rx", 20, 0),
            m("rx_dropped", 40, 56),
            m("__cacheline_group_end__rx", 96, 0),
            m("__cacheline_group_begin__lonely", 96, 0),
            m("__cacheline_group_begin__empty", 100, 0),
            m("__cacheline_group_end__empty", 100, 0),
        ]);
        let g = groups(&s, 64);
        let got: Vec<_> = g
            .iter()
            .map(|g| (g.name.as_str(), g.offset, g.size, g.lines, g.first_line))
            .collect();
        assert_eq!(got, [("rx", 20, 76, 2, 0), ("empty", 100, 0, 0, 1)]);
    }
}
