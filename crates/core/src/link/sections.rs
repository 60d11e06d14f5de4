//! The output sections in address order, as the linker script strings them
//! together: each starts at its alignment after the one before (`sh_addralign`, or
//! the script's `ALIGN(PAGE_SIZE)`/`ALIGN(PMD_SIZE)` the gap before it bears out),
//! and ends at its last object plus a tail kept as it was or rounded to the
//! script's boundary (`.bss` ends on `PMD_SIZE`). The per-CPU area, linked at 0 in
//! its own space, takes its load image's room in the chain (`__per_cpu_load`). A
//! size change in one section moves every one after it by what the alignments do
//! not absorb.

use super::align::align_up;
use super::{LinkMap, SCRIPT_ALIGN, SCRIPT_ALIGN_MAX, borne_out};
use crate::model::{Image, Space};

/// One link of the chain: an output section (or the per-CPU load image).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link<'d> {
    /// The section's name.
    pub section: &'d str,
    /// Its start and end in the ordinary address space (the per-CPU area: its load
    /// image's).
    pub start: u64,
    /// Its end.
    pub end: u64,
    /// The alignment its start keeps, and the bytes before it that the alignment
    /// does not explain (kept as they are).
    pub align: u64,
    /// The bytes before it that the alignment does not explain.
    pub lead: u64,
    /// The link map's output laid in it, with the offset of the output's last
    /// object's end from the section's start in the build.
    pub content: Option<(usize, u64)>,
    /// Where the section's own space starts for the output's places: its start for
    /// an ordinary section (moves with it), 0 for the per-CPU area (never moves).
    pub space: Space,
    /// The offset the output's places are counted from.
    pub base: u64,
    /// How its end follows its last object: rounded up to `tail_align` after
    /// `tail_lead` bytes.
    pub tail_align: u64,
    /// The bytes after its last object before the rounding.
    pub tail_lead: u64,
    /// It starts inside the section before (or is the first): it moves as that one
    /// does.
    pub follows: bool,
    /// The script puts it at a fixed address: it stays.
    pub fixed: bool,
}

/// The output sections of one build in address order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chain<'d> {
    /// The links, in address order.
    pub links: Vec<Link<'d>>,
    /// Whether the per-CPU area of a build that has one found its load image.
    pub percpu_placed: bool,
}

/// Where one section went in a layout: (name, old start, new start, old size, new
/// size), in the ordinary address space.
pub type SectionMove<'d> = (&'d str, u64, u64, u64, u64);

/// The boundary a linker script's `ALIGN()` put `place` on after `end`: the
/// smallest power of two from a page to `PMD_SIZE` whose first boundary after `end`
/// is `place` (1 when none: the gap is bytes, kept as they are). Unlike an input
/// section's (`link::script_boundary`), no guess for a wider gap: a section's tail
/// may be a large unnamed blob.
fn exact_boundary(end: u64, place: u64) -> u64 {
    let mut p = SCRIPT_ALIGN;
    while p <= SCRIPT_ALIGN_MAX {
        if place.is_multiple_of(p) && align_up(end, p) == place {
            return if end == place { 1 } else { p };
        }
        p *= 2;
    }
    1
}

impl<'d> Chain<'d> {
    /// The chain of `image`'s allocated sections (those at a non-zero address),
    /// with the per-CPU area at `__per_cpu_load` when it is linked at 0.
    pub fn build(image: &Image<'d>, map: &LinkMap<'d>) -> Chain<'d> {
        let mut links: Vec<Link<'d>> = Vec::new();
        let output_of = |space: Space, name: &str| {
            map.outputs
                .iter()
                .position(|o| o.space == space && o.section == name)
        };
        let mut percpu_placed = false;
        let percpu_at_zero = image
            .sections
            .iter()
            .find(|s| s.name == ".data..percpu" && s.address == 0);
        let at = |name: &str| image.boundaries.iter().find(|b| b.0 == name).map(|b| b.1);
        // Snapshots written before `__per_cpu_load` was kept: on x86-64 the area's
        // image is the first thing after `__init_begin` (`PERCPU_VADDR` in
        // `arch/x86/kernel/vmlinux.lds.S`).
        let load = at("__per_cpu_load")
            .or_else(|| at("__init_begin").filter(|_| image.arch.starts_with("x86")));
        for s in &image.sections {
            let (start, space, base) = if s.address != 0 {
                (s.address, Space::Global, s.address)
            } else if let (Some(p), Some(at)) = (percpu_at_zero, load)
                && std::ptr::eq(p, s)
            {
                percpu_placed = true;
                (at, Space::Percpu, 0)
            } else {
                continue;
            };
            let output = output_of(space, s.name).or_else(|| {
                // A per-CPU area at a real address (arm64, x86 from 6.15) is placed
                // by offsets all the same.
                output_of(Space::Percpu, s.name).filter(|_| space == Space::Global)
            });
            let (space, base) = match output.map(|o| map.outputs[o].space) {
                Some(Space::Percpu) => (Space::Percpu, map.outputs[output.unwrap_or(0)].start),
                _ => (space, base),
            };
            let content = output.map(|o| (o, map.outputs[o].end.wrapping_sub(base)));
            links.push(Link {
                section: s.name,
                start,
                end: start.saturating_add(s.size),
                align: s.alignment.max(1),
                lead: 0,
                content,
                space,
                base,
                tail_align: 1,
                tail_lead: 0,
                follows: false,
                fixed: false,
            });
        }
        links.sort_by_key(|l| (l.start, l.end));
        align_links(&mut links);
        Chain {
            links,
            percpu_placed,
        }
    }
}

/// Gives each link (in place order) the alignment and lead the gap before it bears
/// out, or marks it fixed (at an address the script sets) or following the one
/// before; and the alignment and lead of its tail after its content.
fn align_links(links: &mut [Link<'_>]) {
    let mut prev_end: Option<u64> = None;
    for l in links.iter_mut() {
        match prev_end {
            // A gap wider than any boundary the script aligns to is an address
            // the script sets (`. = 0xffffffff82a51000`): the section stays.
            Some(end) if end <= l.start && l.start - end <= SCRIPT_ALIGN_MAX => {
                let own = borne_out(l.align, end, l.start);
                let a = own.max(exact_boundary(end, l.start));
                l.align = a;
                l.lead = l.start - align_up(end, a);
            }
            Some(end) if end <= l.start => l.fixed = true,
            // The first section, or one overlapping the one before.
            _ => l.follows = true,
        }
        if let Some((_, rel)) = l.content {
            let last = l.start.saturating_add(rel).min(l.end);
            l.tail_align = exact_boundary(last, l.end);
            l.tail_lead = l.end - align_up(last, l.tail_align);
        }
        prev_end = Some(prev_end.map_or(l.end, |e| e.max(l.end)));
    }
}

impl<'d> LinkMap<'d> {
    /// Places (and sizes) of every object after laying the sections out again with
    /// `edits`, each output section after the one before it in `chain`; with what
    /// each section of the chain became. Outputs outside the chain stay where they
    /// start. Identity when `edits` is empty.
    pub fn layout_chained(
        &self,
        edits: &super::Edits,
        chain: &Chain<'d>,
    ) -> (
        rustc_hash::FxHashMap<usize, (u64, u64)>,
        Vec<SectionMove<'d>>,
    ) {
        let mut out = self.placements();
        let chained: Vec<usize> = chain
            .links
            .iter()
            .filter_map(|l| l.content.map(|c| c.0))
            .collect();
        for (oi, o) in self.outputs.iter().enumerate() {
            if !chained.contains(&oi) {
                self.layout_output(o, o.start, edits, &mut out);
            }
        }
        let mut moves = Vec::new();
        let mut prev_end: Option<u64> = None;
        let mut delta = 0u64;
        for l in &chain.links {
            let start = match prev_end {
                _ if l.fixed => l.start,
                Some(end) if !l.follows => align_up(end.saturating_add(l.lead), l.align),
                _ => l.start.wrapping_add(delta),
            };
            delta = start.wrapping_sub(l.start);
            let end = match l.content {
                Some((oi, _)) => {
                    let o = &self.outputs[oi];
                    let (own, base) = match l.space {
                        Space::Global => (o.start.wrapping_add(delta), l.base.wrapping_add(delta)),
                        Space::Percpu => (o.start, l.base),
                    };
                    let last = self.layout_output(o, own, edits, &mut out);
                    let last = start.saturating_add(last.wrapping_sub(base));
                    align_up(last.saturating_add(l.tail_lead), l.tail_align)
                }
                None => start.saturating_add(l.end - l.start),
            };
            moves.push((l.section, l.start, start, l.end - l.start, end - start));
            prev_end = Some(prev_end.map_or(end, |e| e.max(end)));
        }
        (out, moves)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Image, Section, Symbol};

    /// .data at 0x1000 (0x40 B: `a` of 0x30, then 0x10 unnamed bytes), .bss at
    /// 0x2000 (sh_addralign 32: the page boundary is the script's) holding `z`.
    /// `a` grown to 0x1030 B: .data ends at 0x1000 + 0x1030 + 0x10 = 0x2040, so
    /// .bss starts at align_up(0x2040, 4096) = 0x3000 and `z` with it.
    #[test]
    fn a_section_that_outgrows_its_page_moves_the_next_to_the_next_page() {
        let mut img = Image::test_empty();
        let section = |name, address, size, alignment| Section {
            name,
            address,
            size,
            alignment,
            compressed: false,
        };
        img.sections = vec![
            section(".data", 0x1000, 0x40, 64),
            section(".bss", 0x2000, 0x10, 32),
        ];
        img.symbols.push(Symbol::test_object("a", 0x1000, 0x30));
        let mut z = Symbol::test_object("z", 0x2000, 0x10);
        z.section = ".bss";
        img.symbols.push(z);
        let map = LinkMap::build(&img);
        let chain = Chain::build(&img, &map);
        let (same, _) = map.layout_chained(&super::super::Edits::default(), &chain);
        assert_eq!((same[&0], same[&1]), ((0x1000, 0x30), (0x2000, 0x10)));
        let mut edits = super::super::Edits::default();
        edits.size.insert(0, 0x1030);
        let (got, moves) = map.layout_chained(&edits, &chain);
        assert_eq!(got[&1], (0x3000, 0x10));
        assert_eq!(
            moves,
            vec![
                (".data", 0x1000, 0x1000, 0x40, 0x1040),
                (".bss", 0x2000, 0x3000, 0x10, 0x10)
            ]
        );
        // A gap no page or PMD boundary explains exactly is bytes.
        assert_eq!(exact_boundary(0x1040, 0x2000), 4096);
        assert_eq!(exact_boundary(0x1040, 0x1800), 1);
        assert_eq!(exact_boundary(0x1000, 0x1000), 1);
        assert_eq!(exact_boundary(0x1400100, 0x1600000), 2 << 20);
    }
}
