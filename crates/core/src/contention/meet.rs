//! Where a written part meets another on a line: the one rule that the diff's struct
//! lines (`diff::struct_lines`) and the contention audit (`show --contention`) share.
//! A part is a run of bytes (a member, or an operand's bytes) with the frequent
//! functions that write it and those that only read it; a meeting is a part that
//! frequent code writes and, on one of its lines, another part with disjoint bytes that
//! other frequent code (a function that does not write the first) reads or writes.

use std::borrow::Cow;
use std::cmp::Reverse;

use crate::evidence::frequency::Frequency;
use crate::model::Image;

/// One frequent function's touch of a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Touch {
    /// The function (index into `Image::symbols`).
    pub function: u32,
    /// How often it runs (always frequent in a part).
    pub class: Frequency,
    /// It reaches the part through another CPU's offset (`per_cpu()`), at least once.
    pub remote: bool,
    /// It writes the part the way storage other CPUs write is written, at least once
    /// (`contention::structs::shared_write`; every write to a global or a per-CPU
    /// object counts).
    pub shared: bool,
}

/// A run of bytes that frequent code touches, with who touches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part<'a> {
    /// Its name: a member path, or an object's name with its member.
    pub name: Cow<'a, str>,
    /// The object it belongs to (index into `Image::symbols`), `u32::MAX` for a member
    /// of a struct type.
    pub object: u32,
    /// Its first byte, in the space its lines are counted in (an address, a per-CPU
    /// offset, or an offset into the struct).
    pub from: u64,
    /// The byte past its last.
    pub to: u64,
    /// Frequent functions writing it, sorted by function, each once.
    pub writers: Vec<Touch>,
    /// Frequent functions reading it that do not write it, sorted by function.
    pub readers: Vec<Touch>,
}

impl<'a> Part<'a> {
    /// A part with no touch yet.
    pub fn new(name: Cow<'a, str>, object: u32, from: u64, to: u64) -> Part<'a> {
        Part {
            name,
            object,
            from,
            to,
            writers: Vec::new(),
            readers: Vec::new(),
        }
    }

    /// Adds `touch` as a write or a read (each function once per list; a remote touch
    /// marks the function's entry remote).
    pub fn add(&mut self, touch: Touch, writes: bool) {
        let list = match writes {
            true => &mut self.writers,
            false => &mut self.readers,
        };
        match list.binary_search_by_key(&touch.function, |t| t.function) {
            Ok(i) => {
                list[i].remote |= touch.remote;
                list[i].shared |= touch.shared;
            }
            Err(i) => list.insert(i, touch),
        }
    }

    /// Drops the readers that also write it: they are writers.
    pub fn settle(&mut self) {
        let writers = &self.writers;
        self.readers.retain(|r| {
            writers
                .binary_search_by_key(&r.function, |w| w.function)
                .is_err()
        });
    }

    /// Whether `f` writes it.
    pub fn written_by(&self, f: u32) -> bool {
        self.writers
            .binary_search_by_key(&f, |w| w.function)
            .is_ok()
    }
}

/// How meetings are found.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// The cache line size.
    pub line_size: u64,
    /// How a function's class ranks when one is named for a side (higher first).
    pub strength: fn(Frequency) -> u8,
    /// A meeting needs a remote side (per-CPU data: each CPU's copy is its own
    /// unless another CPU reaches it).
    pub remote: bool,
    /// Two parts one function writes are co-written, true sharing: they never meet
    /// (without it, only the function named for the other side must not write the
    /// written part).
    pub co_written: bool,
    /// The written part needs a writer whose write is shared (`Touch::shared`): for
    /// struct types, whose instances one CPU may own.
    pub shared_writes: bool,
}

/// A meeting: part `written` (index into the parts), written by `writer`, and part
/// `other` on line `line`, touched by `toucher`, which does not write `written`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Met {
    /// The line (the space's offset divided by the line size).
    pub line: u64,
    /// The written part.
    pub written: usize,
    /// The other part.
    pub other: usize,
    /// The function named as writing `written`: the strongest, then the first by name.
    pub writer: Touch,
    /// The function named as touching `other`: the strongest, then the first by name,
    /// writers before readers.
    pub toucher: Touch,
    /// `toucher` writes `other` (else it only reads it).
    pub toucher_writes: bool,
}

/// The name of function `f` of `image` (`?` when out of range).
pub fn name_of<'a>(image: &'a Image<'_>, f: u32) -> &'a str {
    image.symbols.get(f as usize).map_or("?", |s| s.name)
}

/// Every meeting among `parts`: for each written part in order, each of its lines in
/// order, each other part on that line in order (one meeting per written part, line and
/// other part).
pub fn meetings(image: &Image<'_>, parts: &[Part<'_>], rules: &Rules) -> Vec<Met> {
    let ls = rules.line_size.max(1);
    // Each line's parts, in part order: (line, part index), sorted.
    let mut on: Vec<(u64, usize)> = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        for line in lines_of(p, ls) {
            on.push((line, i));
        }
    }
    on.sort_unstable();
    let mut out = Vec::new();
    for (wi, w) in parts.iter().enumerate() {
        if w.writers.is_empty() || (rules.shared_writes && !w.writers.iter().any(|t| t.shared)) {
            continue;
        }
        for line in lines_of(w, ls) {
            let from = on.partition_point(|&(l, _)| l < line);
            let to = on.partition_point(|&(l, _)| l <= line);
            for &(_, oi) in &on[from..to] {
                let o = &parts[oi];
                let apart = o.to <= w.from || o.from >= w.to;
                if oi == wi || o.name == w.name || !apart {
                    continue;
                }
                if rules.co_written && o.writers.iter().any(|t| w.written_by(t.function)) {
                    continue;
                }
                if let Some((writer, toucher, toucher_writes)) = pick(image, w, o, rules) {
                    out.push(Met {
                        line,
                        written: wi,
                        other: oi,
                        writer,
                        toucher,
                        toucher_writes,
                    });
                }
            }
        }
    }
    out
}

/// Whether two touches are one path on one CPU: one function calls the other directly,
/// or one caller makes both frequent (`copy_process()` calling `mm_init()` and
/// `dup_mmap()` on the mm it is building). Their accesses follow each other; they do
/// not contend.
fn related(f: &Touch, g: &Touch) -> bool {
    use crate::evidence::frequency::Often;
    let via = |c: Frequency| match c {
        Frequency::Frequent(Often::CalledBy { caller }) => Some(caller),
        _ => None,
    };
    via(f.class) == Some(g.function)
        || via(g.class) == Some(f.function)
        || (via(f.class).is_some() && via(f.class) == via(g.class))
}

/// The lines part `p` has bytes on.
fn lines_of(p: &Part<'_>, ls: u64) -> std::ops::RangeInclusive<u64> {
    p.from / ls..=(p.to.max(p.from + 1) - 1) / ls
}

/// The strongest touch of `list` by `rules.strength`, the first by name on a tie.
fn strongest<'t>(
    image: &Image<'_>,
    rules: &Rules,
    list: impl Iterator<Item = (&'t Touch, bool)>,
) -> Option<(&'t Touch, bool)> {
    list.max_by_key(|(t, _)| {
        (
            (rules.strength)(t.class),
            Reverse(name_of(image, t.function)),
        )
    })
}

/// The writer of `w` and the toucher of `o` a meeting names, and whether the toucher
/// writes; `None` when no frequent function other than `w`'s writers touches `o` (or,
/// under `rules.remote`, no pair has a remote side).
fn pick(
    image: &Image<'_>,
    w: &Part<'_>,
    o: &Part<'_>,
    rules: &Rules,
) -> Option<(Touch, Touch, bool)> {
    // Other code: not a writer of `w` (a function writing both writes them together,
    // true sharing).
    let writers = || {
        w.writers
            .iter()
            .filter(|t| !rules.shared_writes || t.shared)
            .map(|t| (t, true))
    };
    let best_w = strongest(image, rules, writers())?;
    // Not one path on one CPU with the writer named.
    let touchers = || {
        o.writers
            .iter()
            .map(|t| (t, true))
            .chain(o.readers.iter().map(|t| (t, false)))
            .filter(|(t, _)| !w.written_by(t.function) && !related(best_w.0, t))
    };
    let best_t = strongest(image, rules, touchers())?;
    if !rules.remote {
        return Some((*best_w.0, *best_t.0, best_t.1));
    }
    let remote_w = strongest(image, rules, writers().filter(|(t, _)| t.remote));
    let remote_t = strongest(image, rules, touchers().filter(|(t, _)| t.remote));
    let s = |t: &Touch| (rules.strength)(t.class);
    let key = |f: &Touch, g: &Touch| (s(f).min(s(g)), s(f).max(s(g)));
    let a = remote_w.map(|f| (f, best_t));
    let b = remote_t.map(|g| (best_w, g));
    let ((f, _), (g, writes)) = match (a, b) {
        (Some(a), Some(b)) if key(b.0.0, b.1.0) > key(a.0.0, a.1.0) => b,
        (Some(a), _) => a,
        (None, Some(b)) => b,
        (None, None) => return None,
    };
    Some((*f, *g, writes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Strength;
    use crate::evidence::frequency::Often;
    use crate::model::{Symbol, SymbolKind};

    const KNOWN: Frequency = Frequency::Frequent(Often::Evidence {
        strength: Strength::Known,
    });
    /// Called by f6, which touches no part.
    const CALLED: Frequency = Frequency::Frequent(Often::CalledBy { caller: 6 });

    /// An image whose symbols are functions `f0`, `f1`, ... `f6`.
    fn image() -> Image<'static> {
        let mut image = Image::test_empty();
        image.symbols = ["f0", "f1", "f2", "f3", "f4", "f5", "f6"]
            .iter()
            .map(|n| {
                let mut s = Symbol::test_object(n, 0, 1);
                s.kind = SymbolKind::Function;
                s
            })
            .collect();
        image
    }

    /// A part of `[from, to)` written by `writers` and read by `readers`, each
    /// `(function, class, remote)`.
    fn part(
        name: &'static str,
        (from, to): (u64, u64),
        writers: &[(u32, Frequency, bool)],
        readers: &[(u32, Frequency, bool)],
    ) -> Part<'static> {
        let mut p = Part::new(Cow::Borrowed(name), u32::MAX, from, to);
        for (list, writes) in [(writers, true), (readers, false)] {
            for &(function, class, remote) in list {
                p.add(
                    Touch {
                        function,
                        class,
                        remote,
                        shared: true,
                    },
                    writes,
                );
            }
        }
        p.settle();
        p
    }

    fn rules(remote: bool, co_written: bool) -> Rules {
        Rules {
            shared_writes: false,
            line_size: 64,
            strength: crate::contention::Basis::rank,
            remote,
            co_written,
        }
    }

    /// (written, other, writer, toucher, toucher writes) of each meeting.
    fn spelled(image: &Image<'_>, parts: &[Part<'_>], rules: &Rules) -> Vec<String> {
        meetings(image, parts, rules)
            .iter()
            .map(|m| {
                format!(
                    "{} {} {} {} {}",
                    parts[m.written].name,
                    parts[m.other].name,
                    name_of(image, m.writer.function),
                    name_of(image, m.toucher.function),
                    if m.toucher_writes { "w" } else { "r" }
                )
            })
            .collect()
    }

    /// A written part meets every part with disjoint bytes on its line that a function
    /// not writing it touches; the strongest function is named on each side, the first
    /// by name on a tie (`b c`: f0 and f2 are both known); co-written parts (one
    /// function writes both) meet only when the rule allows them; a part on another
    /// line (`e`) or overlapping (`d` with `a` and `b`) never meets.
    #[test]
    fn a_written_part_meets_other_codes_parts_on_its_line() {
        let image = image();
        let parts = [
            part("a", (0, 8), &[(1, CALLED, false), (2, KNOWN, false)], &[]),
            part(
                "b",
                (8, 16),
                &[(3, CALLED, false)],
                &[(4, KNOWN, false), (5, KNOWN, false)],
            ),
            part("c", (16, 24), &[(2, KNOWN, false)], &[(0, KNOWN, false)]),
            part("d", (4, 12), &[], &[(0, KNOWN, false)]),
            part("e", (64, 72), &[], &[(0, KNOWN, false)]),
        ];
        assert_eq!(
            spelled(&image, &parts, &rules(false, false)),
            [
                "a b f2 f4 r",
                "a c f2 f0 r",
                "b a f3 f2 w",
                "b c f3 f0 r",
                "c a f2 f1 w",
                "c b f2 f4 r",
                "c d f2 f0 r",
            ]
        );
        // f2 writes a and c: they are co-written, and never meet.
        assert_eq!(
            spelled(&image, &parts, &rules(false, true)),
            [
                "a b f2 f4 r",
                "b a f3 f2 w",
                "b c f3 f0 r",
                "c b f2 f4 r",
                "c d f2 f0 r",
            ]
        );
    }

    /// A function and its direct callee, or two callees of one caller, are one path on
    /// one CPU: the toucher named is never one of them; with only such touchers there is
    /// no meeting.
    #[test]
    fn one_path_on_one_cpu_never_meets_itself() {
        let image = image();
        let by_f0 = Frequency::Frequent(Often::CalledBy { caller: 0 });
        let parts = [
            part("w", (0, 8), &[(0, KNOWN, false)], &[]),
            part("callee", (8, 16), &[(1, by_f0, false)], &[]),
            part(
                "sibling",
                (16, 24),
                &[],
                &[(2, by_f0, false), (3, KNOWN, false)],
            ),
        ];
        assert_eq!(
            spelled(&image, &parts, &rules(false, false)),
            ["w sibling f0 f3 r", "callee sibling f1 f3 r"]
        );
    }

    /// Under the per-CPU rule a meeting needs a remote side, and names it even when a
    /// local function is stronger.
    #[test]
    fn per_cpu_meetings_need_a_remote_side() {
        let image = image();
        let parts = [
            part("w", (0, 8), &[(0, KNOWN, false)], &[]),
            part("local", (8, 16), &[], &[(1, KNOWN, false)]),
            part(
                "remote",
                (16, 24),
                &[],
                &[(2, KNOWN, false), (3, CALLED, true)],
            ),
            part("far", (24, 32), &[(4, CALLED, true)], &[]),
        ];
        assert_eq!(
            spelled(&image, &parts, &rules(true, true)),
            [
                "w remote f0 f3 r",
                "w far f0 f4 w",
                "far w f4 f0 w",
                "far local f4 f1 r",
                "far remote f4 f2 r"
            ]
        );
    }
}
