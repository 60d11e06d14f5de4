//! Draws a cacheline map: a span of address space as rows of one line each (pairs of
//! lines bracketed for the adjacent-line prefetcher), with objects, members, holes and
//! padding as blocks whose width is their size in bytes. Callers hand it positioned
//! blocks taken from the report; this file only turns them into HTML geometry.

use std::collections::BTreeSet;
use std::fmt::{self, Write};

use super::esc;
use crate::place_str;
use layout_diff_core::model::Space;

/// What a block is, which decides how it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An object or member.
    Item,
    /// Unused bytes between members.
    Hole,
    /// Unused bytes at the end of a struct.
    Padding,
}

/// How a block changed, spelled in its label as well as drawn (not colour alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Unchanged.
    None,
    /// New in this build.
    Added,
    /// Gone from this build.
    Removed,
    /// Moved or resized.
    Changed,
}

/// One block: `[start, start + size)` in the map's space.
#[derive(Debug, Clone)]
pub struct Block {
    /// Its first byte in the map's space.
    pub start: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its name (an object, member, hole).
    pub name: String,
    /// Type, or what the block is (`hole`, `padding`).
    pub what: String,
    /// What sort of block it is.
    pub kind: Kind,
    /// How it changed.
    pub mark: Mark,
    /// The object the map is about.
    pub focus: bool,
    /// A write-hot object or member.
    pub hot: bool,
    /// Bitfields inside this block (a storage unit): (name, first bit, bits).
    pub bits: Vec<(String, u64, u64)>,
    /// Extra words for the details panel (e.g. `line 1 -> 0`).
    pub note: String,
}

impl Block {
    /// A block of `size` bytes at `start`, an item unmarked and out of focus.
    pub fn new(start: u64, size: u64, name: impl Into<String>, what: impl Into<String>) -> Block {
        Block {
            start,
            size,
            name: name.into(),
            what: what.into(),
            kind: Kind::Item,
            mark: Mark::None,
            focus: false,
            hot: false,
            bits: Vec::new(),
            note: String::new(),
        }
    }
}

/// Adds a bitfield of `bits` bits at bit `bit` of the storage unit `[start, start +
/// size)`: into the bitfield block its unit overlaps (units of neighbouring bitfields
/// may overlap, as in `restart_flags:20` at 48 and `brk_randomized:3` at 50 of the
/// fixture's task_struct), else as a new block. Bits are kept from the block's start.
pub fn add_bitfield(
    blocks: &mut Vec<Block>,
    (start, size): (u64, u64),
    (name, bit, bits): (&str, u64, u64),
    what: &str,
) -> usize {
    let end = start.saturating_add(size.max(1));
    let found = blocks.iter().position(|b| {
        !b.bits.is_empty() && b.start < end && start < b.start.saturating_add(b.size.max(1))
    });
    let i = match found {
        Some(i) => {
            let b = &mut blocks[i];
            if start < b.start {
                let shift = (b.start - start).saturating_mul(8);
                for x in &mut b.bits {
                    x.1 = x.1.saturating_add(shift);
                }
                b.size = b.size.saturating_add(b.start - start);
                b.start = start;
            }
            b.size = b.size.max(end - b.start);
            b.name = format!("{}, {name}:{bits}", b.name);
            i
        }
        None => {
            blocks.push(Block::new(start, size, format!("{name}:{bits}"), what));
            blocks.len() - 1
        }
    };
    let b = &mut blocks[i];
    b.bits.push((
        name.to_string(),
        (start - b.start).saturating_mul(8).saturating_add(bit),
        bits,
    ));
    i
}

/// A labelled band under the rows: a cache-line group, or a member that moved.
#[derive(Debug, Clone)]
pub struct Band {
    /// Its first byte in the map's space.
    pub start: u64,
    /// Its size in bytes.
    pub size: u64,
    /// What it is, as the map prints it.
    pub label: String,
}

/// A span of lines to draw: rows from `first_line` to `last_line` (line numbers in
/// the space, i.e. start / line size), and the blocks and bands on them.
#[derive(Debug, Clone)]
pub struct Map {
    /// The caption above the map.
    pub caption: String,
    /// The line size, the bytes of one row.
    pub line_size: u64,
    /// The first row's line number.
    pub first_line: u64,
    /// The last row's line number.
    pub last_line: u64,
    /// Added to the addresses printed (row labels and details), e.g. a struct's base.
    pub origin: u64,
    /// Row labels: `address` (hex) or `offset` (decimal bytes from the struct start).
    pub offsets: bool,
    /// Addresses, or per-CPU offsets (`percpu+0x10c0`, as the text prints them).
    pub space: Space,
    /// Everything drawn on the rows.
    pub blocks: Vec<Block>,
    /// Groups and moved members under the rows.
    pub bands: Vec<Band>,
}

/// Most rows drawn for one map; a longer span is cut with a note.
const MAX_ROWS: u64 = 160;

fn pct(part: u64, whole: u64) -> String {
    format!("{:.4}", part as f64 * 100.0 / whole as f64)
}

fn mark_word(m: Mark) -> &'static str {
    match m {
        Mark::None => "",
        Mark::Added => "+",
        Mark::Removed => "-",
        Mark::Changed => "~",
    }
}

fn classes(b: &Block) -> String {
    let mut c = String::from("cell");
    c.push_str(match b.kind {
        Kind::Item => " item",
        Kind::Hole => " hole",
        Kind::Padding => " pad",
    });
    c.push_str(match b.mark {
        Mark::None => "",
        Mark::Added => " added",
        Mark::Removed => " removed",
        Mark::Changed => " changed",
    });
    if b.focus {
        c.push_str(" focus");
    }
    if b.hot {
        c.push_str(" hot");
    }
    c
}

impl Map {
    fn place(&self, at: u64) -> String {
        if self.offsets {
            format!("{}", at.wrapping_sub(self.origin))
        } else {
            place_str(self.space, at)
        }
    }

    /// The rows drawn, as (first line, last line): one per line where a block or band
    /// starts or ends, and one for each run of lines between two such lines (they hold
    /// the same blocks whole, or nothing); at most `MAX_ROWS`.
    fn rows(&self) -> Vec<(u64, u64)> {
        let ls = self.line_size;
        let (first, last) = (self.first_line, self.last_line);
        let busy: BTreeSet<u64> = self
            .blocks
            .iter()
            .map(|b| (b.start, b.size))
            .chain(self.bands.iter().map(|b| (b.start, b.size)))
            .flat_map(|(start, size)| [start / ls, start.saturating_add(size.max(1) - 1) / ls])
            .filter(|l| (first..=last).contains(l))
            .collect();
        let mut rows = Vec::new();
        let mut line = first;
        while line <= last && (rows.len() as u64) < MAX_ROWS {
            let end = if busy.contains(&line) {
                line
            } else {
                busy.range(line..).next().map_or(last, |&b| b - 1).min(last)
            };
            rows.push((line, end));
            line = end + 1;
        }
        rows
    }

    /// Whether a row stands for more than one line (the legend says so).
    pub fn has_runs(&self) -> bool {
        self.rows().iter().any(|(a, b)| b > a)
    }

    /// Writes the map as HTML: one row per line where a block or band starts or ends;
    /// the lines between two such lines hold the same blocks whole (the middle of a
    /// large member) or nothing, and are drawn as one row that says how many lines it
    /// stands for, so that no row is empty or a copy of the one above.
    pub fn html(&self, out: &mut impl Write) -> fmt::Result {
        let ls = self.line_size;
        write!(
            out,
            "<figure class=\"map\"><figcaption>{}</figcaption>",
            esc(&self.caption)
        )?;
        let rows = self.rows();
        for &(line, end) in &rows {
            let lo = line * ls;
            let hi = end.saturating_mul(ls).saturating_add(ls);
            self.row(out, line, end, lo, hi)?;
        }
        let (line, last) = (
            rows.last()
                .map_or(self.first_line, |r| r.1.saturating_add(1)),
            self.last_line,
        );
        if line <= last {
            write!(
                out,
                "<p class=\"more\">{} more lines not drawn</p>",
                last - line + 1
            )?;
        }
        out.write_str("</figure>")
    }

    /// One row: the line `first`, or the lines `first..=last` (bytes `lo..hi`) that
    /// hold the same blocks whole or nothing.
    fn row(&self, out: &mut impl Write, first: u64, last: u64, lo: u64, hi: u64) -> fmt::Result {
        self.row_label(out, first, last, lo)?;
        self.row_blocks(out, last - first + 1, lo, hi)?;
        write!(out, "</div><div class=\"bands\">")?;
        self.row_bands(out, lo, hi)?;
        out.write_str("</div></div>")
    }

    /// The row's opening and its label: the line and its pair, or the run of lines.
    fn row_label(&self, out: &mut impl Write, first: u64, last: u64, lo: u64) -> fmt::Result {
        let ls = self.line_size;
        let n = last - first + 1;
        let pair = if first.is_multiple_of(2) {
            "pair-a"
        } else {
            "pair-b"
        };
        if n == 1 {
            write!(
                out,
                "<div class=\"row {pair}\" data-line=\"{}\"><span class=\"lbl\" title=\"{}-byte pair {} .. {}\">{}</span><div class=\"lane\">",
                self.place(lo),
                2 * ls,
                self.place((first & !1).saturating_mul(ls)),
                self.place((first | 1).saturating_mul(ls).saturating_add(ls - 1)),
                self.place(lo)
            )?;
        } else {
            write!(
                out,
                "<div class=\"row run {pair}\" data-line=\"{}\" data-lines=\"{n}\"><span class=\"lbl\" title=\"{n} lines, {} to {}\">{}<br>\u{22ee} {}</span><div class=\"lane\">",
                self.place(lo),
                self.place(lo),
                self.place(last * ls),
                self.place(lo),
                self.place(last * ls)
            )?;
        }
        Ok(())
    }

    /// The blocks on the row's `n` lines, from `lo` to `hi`, or a note that none is.
    fn row_blocks(&self, out: &mut impl Write, n: u64, lo: u64, hi: u64) -> fmt::Result {
        let span = hi - lo;
        let suffix = if n == 1 {
            String::new()
        } else {
            format!(" ({n} lines)")
        };
        let mut drawn = false;
        for b in &self.blocks {
            let (s, e) = (b.start.max(lo), (b.start + b.size.max(1)).min(hi));
            if s >= e {
                continue;
            }
            drawn = true;
            self.cell(
                out,
                b,
                (s - lo, e - s, span),
                (b.start < lo, b.start + b.size > hi),
                &suffix,
            )?;
        }
        if !drawn {
            write!(
                out,
                "<span class=\"gap\">no block drawn on {}</span>",
                if n == 1 {
                    "this line".to_string()
                } else {
                    format!("these {n} lines")
                }
            )?;
        }
        Ok(())
    }

    /// The bands on the row: a bar for a range, a point label for a small one.
    fn row_bands(&self, out: &mut impl Write, lo: u64, hi: u64) -> fmt::Result {
        let span = hi - lo;
        let mut pins = 0;
        for band in &self.bands {
            let (s, e) = (band.start.max(lo), (band.start + band.size.max(1)).min(hi));
            if s >= e {
                continue;
            }
            // A point label: on one of two levels in turn, and on the left of its
            // tick in the right part of the line, so that labels stay in the lane.
            let (class, place) = if band.size >= 8 {
                (
                    "band",
                    format!("left:{}%;width:{}%", pct(s - lo, span), pct(e - s, span)),
                )
            } else {
                pins += 1;
                let level = if pins % 2 == 0 { " lo" } else { "" };
                if 2 * (s - lo) > span {
                    (
                        if level.is_empty() {
                            "band pin end"
                        } else {
                            "band pin end lo"
                        },
                        format!("right:{}%", pct(hi - s, span)),
                    )
                } else {
                    (
                        if level.is_empty() {
                            "band pin"
                        } else {
                            "band pin lo"
                        },
                        format!("left:{}%", pct(s - lo, span)),
                    )
                }
            };
            write!(
                out,
                "<span class=\"{class}\" style=\"{place}\" title=\"{}\">{}</span>",
                esc(&band.label),
                esc(&band.label)
            )?;
        }
        Ok(())
    }

    /// One block's part in a row: `left` and `width` bytes of the row's `span`;
    /// `cont`/`goes_on` when it began before the row or goes on after it.
    fn cell(
        &self,
        out: &mut impl Write,
        b: &Block,
        (left, width, span): (u64, u64, u64),
        (cont, goes_on): (bool, bool),
        suffix: &str,
    ) -> fmt::Result {
        let label = format!(
            "{}{}{}{}{suffix}",
            if b.hot { "W " } else { "" },
            mark_word(b.mark),
            b.name,
            if goes_on { " \u{2192}" } else { "" }
        );
        let detail = format!(
            "{} | {} | at {} | {} B{}{}",
            b.name,
            b.what,
            self.place(b.start),
            b.size,
            if b.hot { " | write-hot" } else { "" },
            if b.note.is_empty() {
                String::new()
            } else {
                format!(" | {}", b.note)
            }
        );
        write!(
            out,
            "<div class=\"{}{}\" style=\"left:{}%;width:{}%\" tabindex=\"0\" data-name=\"{}\" data-detail=\"{}\" title=\"{}\">",
            classes(b),
            if cont { " cont" } else { "" },
            pct(left, span),
            pct(width, span),
            esc(&b.name),
            esc(&detail),
            esc(&detail)
        )?;
        for (name, bit, bits) in b.bits.iter().filter(|_| b.size > 0) {
            let unit = b.size * 8;
            write!(
                out,
                "<span class=\"bit\" style=\"left:{}%;width:{}%\" data-name=\"{}\" title=\"{}:{bits} at bit {bit}\"></span>",
                pct(*bit, unit),
                pct(*bits, unit),
                esc(name),
                esc(name)
            )?;
        }
        write!(out, "<span class=\"txt\">{}</span></div>", esc(&label))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(blocks: Vec<Block>, last_line: u64) -> String {
        let m = Map {
            caption: "m".into(),
            line_size: 64,
            first_line: 0,
            last_line,
            origin: 0,
            offsets: true,
            space: Space::Global,
            blocks,
            bands: Vec::new(),
        };
        crate::string(|o| m.html(o)).unwrap()
    }

    /// (data-line, data-lines, the row's HTML) of each row.
    fn rows(html: &str) -> Vec<(String, u64, String)> {
        html.split("<div class=\"row ")
            .skip(1)
            .map(|r| {
                let attr = |k: &str| {
                    r.split(&format!("{k}=\""))
                        .nth(1)
                        .map(|v| v.split('"').next().unwrap().to_string())
                };
                let n = attr("data-lines").map_or(1, |v| v.parse().unwrap());
                (attr("data-line").unwrap(), n, r.to_string())
            })
            .collect()
    }

    /// A member over lines 1..=5 (64..384) then one on line 6: lines 2..=4 hold its
    /// middle only and are one row; no row is without a block.
    #[test]
    fn middle_lines_of_one_block_are_one_row() {
        let html = map(
            vec![
                Block::new(0, 80, "head", "t"),
                Block::new(80, 300, "big", "t"),
                Block::new(380, 8, "tail", "t"),
            ],
            5,
        );
        let got: Vec<(String, u64)> = rows(&html).into_iter().map(|(l, n, _)| (l, n)).collect();
        assert_eq!(
            got,
            vec![
                ("0".into(), 1),
                ("64".into(), 1),
                ("128".into(), 3),
                ("320".into(), 1)
            ]
        );
        assert!(html.contains(">big \u{2192} (3 lines)</span>"));
        assert!(!html.contains("class=\"gap\""));
    }

    /// Lines with no block (a diff's map of the changed members only) are one row that
    /// says so, never an empty row.
    #[test]
    fn lines_without_blocks_say_so() {
        let html = map(vec![Block::new(600, 8, "changed", "t")], 9);
        let got: Vec<(String, u64)> = rows(&html).into_iter().map(|(l, n, _)| (l, n)).collect();
        assert_eq!(got, vec![("0".into(), 9), ("576".into(), 1)]);
        for (_, _, r) in rows(&html) {
            assert!(
                r.contains("<div class=\"cell") || r.contains("class=\"gap\""),
                "{r}"
            );
        }
        assert!(html.contains("no block drawn on these 9 lines"));
    }
}
