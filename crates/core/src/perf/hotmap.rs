//! Maps a perf c2c report (run-time addresses) onto a build: the KASLR offset (given,
//! or inferred from the code addresses and the image's functions), then for each hot
//! line the objects on it and the struct members at the offsets perf reported; and,
//! for a diff, where those objects and members went in the next build and what shares
//! their lines there. Pure: typed results, no printing.

use std::collections::BTreeMap;

use serde::Serialize;

use super::c2c::{C2cReport, HotLine};
use crate::layout::{SpaceIndex, place};
use crate::model::{Image, Space, Symbol, SymbolKind};

/// x86_64 KASLR moves the kernel in steps of 2 MiB.
pub const KASLR_ALIGN: u64 = 2 << 20;

/// The KASLR offset between perf's run-time addresses and the build's link-time ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Kaslr {
    /// Given with `--kaslr-offset`.
    Given {
        /// The offset.
        offset: u64,
    },
    /// `agreeing` of the `of` code addresses that name a function of the image.
    Inferred {
        /// The offset most code addresses agree on.
        offset: u64,
        /// Code addresses that agree on it.
        agreeing: usize,
        /// Code addresses that name a function of the image.
        of: usize,
    },
}

impl Kaslr {
    /// The offset, given or inferred.
    pub fn offset(self) -> u64 {
        match self {
            Kaslr::Given { offset } | Kaslr::Inferred { offset, .. } => offset,
        }
    }
}

/// The offset most code addresses agree on: for each access whose symbol names a
/// function of `image`, the 2 MiB multiple that puts its code address inside it.
pub fn infer_kaslr(report: &C2cReport, image: &Image<'_>) -> Result<Kaslr, NoKaslrOffset> {
    let mut by_name: BTreeMap<&str, Vec<&Symbol<'_>>> = BTreeMap::new();
    for s in image
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Function)
    {
        by_name.entry(s.name).or_default().push(s);
    }
    let mut votes: BTreeMap<u64, usize> = BTreeMap::new();
    let mut of = 0;
    for a in report.lines.iter().flat_map(|l| &l.accesses) {
        let (Some(code), Some(sym)) = (a.code_address, a.symbol.as_deref()) else {
            continue;
        };
        let mut candidates: Vec<&Symbol<'_>> = by_name.get(sym).cloned().unwrap_or_default();
        if candidates.is_empty() && sym.len() >= 20 {
            // perf cuts symbols (30 characters by default): try it as a prefix.
            candidates = by_name
                .range(sym..)
                .take_while(|(n, _)| n.starts_with(sym))
                .flat_map(|(_, v)| v.iter().copied())
                .take(16)
                .collect();
        }
        let mut offsets: Vec<u64> = candidates
            .iter()
            .filter_map(|f| {
                let d = code.wrapping_sub(f.address);
                let within = d % KASLR_ALIGN;
                (within < f.size.max(1)).then_some(d - within)
            })
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        if !offsets.is_empty() {
            of += 1;
        }
        for o in offsets {
            *votes.entry(o).or_default() += 1;
        }
    }
    let best = votes
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(o, n)| (*o, *n));
    match best {
        Some((offset, agreeing)) => Ok(Kaslr::Inferred {
            offset,
            agreeing,
            of,
        }),
        None => Err(NoKaslrOffset),
    }
}

/// No code address of a c2c report falls in a function of the build it names, so the
/// KASLR offset cannot be inferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot infer the KASLR offset: no code address in the report falls in a \
     function of the image it names; give --kaslr-offset HEX"
)]
pub struct NoKaslrOffset;

/// An object on a hot line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HotObject {
    /// The object's name, qualified when the bare name is not unique.
    pub name: String,
    /// Its link-time address.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address: u64,
    /// Its size in bytes.
    pub size: u64,
}

/// One offset perf reported, mapped to the object and member there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotAccess {
    /// The offset in the line perf reported.
    pub offset: u64,
    /// The row's percentages in print order (HITM or peer shares, then stores).
    pub percents: Vec<f64>,
    /// The object at that offset, when one is.
    pub object: Option<String>,
    /// Member path inside the object (`[3].lock` for an array element).
    pub member: Option<String>,
    /// Byte of the member perf reported (0: its first byte).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within: Option<u64>,
    /// The code symbol doing the access, as perf printed it.
    pub code: Option<String>,
    /// Its source line, as perf printed it.
    pub source: Option<String>,
}

/// One hot line mapped onto the image.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MappedLine {
    /// perf's index (rank) of the line.
    pub index: u64,
    /// Its run-time address, as perf printed it.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub runtime: u64,
    /// Link-time start of the line; `None` when it is outside the image (heap, modules).
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub address: Option<u64>,
    /// Where a line outside the image lies (x86_64 only; see `region`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<Region>,
    /// Load HITM count (`-d peer`: load peer count).
    pub hitm: u64,
    /// The line's share of all HITMs (or peers), as printed, without `%`.
    pub share: Option<f64>,
    /// The objects on the line.
    pub objects: Vec<HotObject>,
    /// The offsets accessed, mapped to objects and members.
    pub accesses: Vec<HotAccess>,
}

/// The x86_64 kernel address-space areas a run-time address outside the image can be in
/// (Documentation/arch/x86/x86_64/mm.rst; 4- and 5-level paging).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    /// The direct map, vmalloc and vmemmap: slab objects, per-CPU copies, stacks.
    Heap,
    /// The module mapping space above the kernel image.
    Modules,
    /// User space or an address no area claims.
    Other,
}

/// The area of run-time address `a`; `None` for architectures not described here.
pub fn region(arch: &str, a: u64) -> Option<Region> {
    if arch != "x86_64" {
        return None;
    }
    Some(match a {
        // Direct map to vmemmap: from ffff888000000000 with 4-level paging, from
        // ff11000000000000 with 5-level; cpu_entry_area and above are not heap.
        0xff11_0000_0000_0000..=0xffff_fdff_ffff_ffff => Region::Heap,
        0xffff_ffff_c000_0000..=0xffff_ffff_feff_ffff => Region::Modules,
        _ => Region::Other,
    })
}

/// A report mapped onto one build, lines ranked by HITM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotMap {
    /// The offset the addresses were mapped with.
    pub kaslr: Kaslr,
    /// The line size of the build.
    pub line_size: u64,
    /// The hot lines, by HITM.
    pub lines: Vec<MappedLine>,
    /// Lines outside the image.
    pub outside: usize,
}

fn in_image(image: &Image<'_>, a: u64) -> bool {
    image
        .sections
        .iter()
        .any(|s| s.address != 0 && a >= s.address && a - s.address < s.size)
}

/// The member of `sym`'s struct type at byte `rel` of the object (deepest first), and
/// the byte of that member.
fn member_at(image: &Image<'_>, sym: &Symbol<'_>, rel: u64) -> Option<(String, u64)> {
    let var = image.variable_for(sym)?;
    let layout = image.struct_by_id(var.layout?);
    let (prefix, rel) = if var.is_array && layout.size > 0 {
        (format!("[{}].", rel / layout.size), rel % layout.size)
    } else {
        (String::new(), rel)
    };
    let m = layout
        .flat_members()
        .into_iter()
        .filter(|(_, m)| m.name.is_some() && m.offset <= rel && rel - m.offset < m.size)
        .max_by_key(|(depth, _)| *depth)?
        .1;
    Some((format!("{prefix}{}", m.name?), rel - m.offset))
}

/// Maps `report` onto `image` with `kaslr`.
pub fn map(report: &C2cReport, image: &Image<'_>, kaslr: Kaslr) -> HotMap {
    let ls = image.line_size;
    let index = SpaceIndex::data(&image.symbols, Space::Global);
    let mut lines: Vec<MappedLine> = report
        .lines
        .iter()
        .map(|l| map_line(l, image, &index, kaslr.offset(), ls))
        .collect();
    lines.sort_by(|a, b| b.hitm.cmp(&a.hitm).then(a.index.cmp(&b.index)));
    HotMap {
        kaslr,
        line_size: ls,
        outside: lines.iter().filter(|l| l.address.is_none()).count(),
        lines,
    }
}

fn map_line(
    l: &HotLine,
    image: &Image<'_>,
    index: &SpaceIndex<'_, '_>,
    off: u64,
    ls: u64,
) -> MappedLine {
    let link = l.address.wrapping_sub(off);
    let start = link - link % ls;
    let inside = in_image(image, start);
    let symbols = if inside {
        index.overlapping(start, start.saturating_add(ls))
    } else {
        Vec::new()
    };
    let accesses = l
        .accesses
        .iter()
        .map(|a| {
            let at = start.saturating_add(a.offset);
            let sym = symbols.iter().find(|s| s.place <= at && at < s.place_end());
            let member = sym.and_then(|s| member_at(image, s, at - s.place));
            HotAccess {
                offset: a.offset,
                percents: a.percents.clone(),
                object: sym.map(|s| s.qualified_name()),
                within: member.as_ref().map(|m| m.1),
                member: member.map(|m| m.0),
                code: a.symbol.clone(),
                source: a.source.clone(),
            }
        })
        .collect();
    MappedLine {
        index: l.index,
        runtime: l.address,
        address: inside.then_some(start),
        region: if inside {
            None
        } else {
            region(&image.arch, l.address)
        },
        hitm: l.hitm,
        share: l.share,
        objects: symbols
            .iter()
            .map(|s| HotObject {
                name: s.qualified_name(),
                address: s.place,
                size: s.size,
            })
            .collect(),
        accesses: if inside { accesses } else { Vec::new() },
    }
}

/// A hot object (or one of its hot members) followed into the new build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Followed {
    /// The hot object.
    pub object: String,
    /// `None` for the object as a whole.
    pub member: Option<String>,
    /// Its address in the old build (a member's: the member's).
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub old_address: u64,
    /// `None`: gone from the new build (or the member is).
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub new_address: Option<u64>,
    /// Start of the first and of the last line it covers in the new build.
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub new_first_line: Option<u64>,
    /// Start of the last line it covers in the new build.
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub new_last_line: Option<u64>,
    /// Lines it covers in the new build.
    pub new_line_count: u64,
    /// Other objects on those lines in the new build.
    pub new_neighbours: Vec<String>,
    /// For a member: the object's other members on its new line.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub new_members: Vec<String>,
}

/// One hot line of the old build and where its tenants went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FollowedLine {
    /// perf's index (rank) of the line.
    pub index: u64,
    /// The line's start in the old build.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub old_address: u64,
    /// Its HITM count.
    pub hitm: u64,
    /// Its tenants and their hot members, followed.
    pub followed: Vec<Followed>,
}

/// The `--hot` section of a diff report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotFollow {
    /// The offset perf's addresses were mapped with.
    pub kaslr: Kaslr,
    /// The hot lines inside the old build.
    pub lines: Vec<FollowedLine>,
    /// Lines outside the image.
    pub outside: usize,
}

fn find_sym<'a, 'd>(image: &'a Image<'d>, qualified: &str) -> Option<&'a Symbol<'d>> {
    image.symbols.iter().find(|s| {
        s.kind != SymbolKind::Function
            && s.space == Space::Global
            && s.qualified_name() == qualified
    })
}

/// Offset of member path `path` (`a`, or `[i].a`) in `sym`'s type in `image`.
fn member_offset(image: &Image<'_>, sym: &Symbol<'_>, path: &str) -> Option<u64> {
    let var = image.variable_for(sym)?;
    let layout = image.struct_by_id(var.layout?);
    let (base, name) = match path.strip_prefix('[') {
        Some(rest) => {
            let (i, name) = rest.split_once("].")?;
            (i.parse::<u64>().ok()?.checked_mul(layout.size)?, name)
        }
        None => (0, path),
    };
    let m = layout
        .flat_members()
        .into_iter()
        .find(|(_, m)| m.name == Some(name))?
        .1;
    base.checked_add(m.offset)
}

/// Follows the objects and members on `old_map`'s lines into `new`.
pub fn follow(old_map: &HotMap, new: &Image<'_>) -> HotFollow {
    let ls = new.line_size;
    let index = SpaceIndex::data(&new.symbols, Space::Global);
    let lines = old_map
        .lines
        .iter()
        .filter_map(|l| {
            let old_address = l.address?;
            let mut followed = Vec::new();
            for o in &l.objects {
                let s = find_sym(new, &o.name);
                followed.push(tenancy(
                    &index,
                    s,
                    &o.name,
                    None,
                    o.address,
                    s.map(|s| (s.place, s.size)),
                    ls,
                ));
            }
            for a in &l.accesses {
                let (Some(obj), Some(member)) = (&a.object, &a.member) else {
                    continue;
                };
                if followed
                    .iter()
                    .any(|f| &f.object == obj && f.member.as_ref() == Some(member))
                {
                    continue;
                }
                let s = find_sym(new, obj);
                // The byte perf reported, at the same place in the member in NEW.
                let within = a.within.unwrap_or(0);
                // No place past 2^64 (a forged offset): the member is not followed.
                let at = s.and_then(|s| {
                    let at = s.place.checked_add(member_offset(new, s, member)?)?;
                    Some((at.checked_add(within)?, 1))
                });
                let mut t = tenancy(
                    &index,
                    s,
                    obj,
                    Some(member),
                    old_address.saturating_add(a.offset),
                    at,
                    ls,
                );
                if let (Some(s), Some(line)) = (s, t.new_first_line) {
                    let bare = member.rsplit('.').next().unwrap_or(member);
                    t.new_members = members_on_line(new, s, line, ls, bare);
                }
                followed.push(t);
            }
            Some(FollowedLine {
                index: l.index,
                old_address,
                hitm: l.hitm,
                followed,
            })
        })
        .collect();
    HotFollow {
        kaslr: old_map.kaslr,
        lines,
        outside: old_map.outside,
    }
}

fn tenancy(
    index: &SpaceIndex<'_, '_>,
    sym: Option<&Symbol<'_>>,
    object: &str,
    member: Option<&String>,
    old_address: u64,
    at: Option<(u64, u64)>,
    ls: u64,
) -> Followed {
    let mut f = Followed {
        object: object.to_string(),
        member: member.cloned(),
        old_address,
        new_address: at.map(|(a, _)| a),
        new_first_line: None,
        new_last_line: None,
        new_line_count: 0,
        new_neighbours: Vec::new(),
        new_members: Vec::new(),
    };
    if let (Some(sym), Some((a, size))) = (sym, at) {
        let p = place(a, size, ls);
        f.new_first_line = Some(p.first_line * ls);
        f.new_last_line = Some(p.last_line * ls);
        f.new_line_count = p.lines;
        let (lo, hi) = (
            p.first_line * ls,
            p.last_line.saturating_add(1).saturating_mul(ls),
        );
        f.new_neighbours = index
            .overlapping(lo, hi)
            .into_iter()
            .filter(|s| !(s.place == sym.place && s.name == sym.name))
            .map(|s| s.qualified_name())
            .collect();
    }
    f
}

/// Leaf members of `sym`'s type (other than `except`) on the line starting at `line`.
fn members_on_line(
    image: &Image<'_>,
    sym: &Symbol<'_>,
    line: u64,
    ls: u64,
    except: &str,
) -> Vec<String> {
    let Some(layout) = image.variable_for(sym).and_then(|v| v.layout) else {
        return Vec::new();
    };
    image
        .struct_by_id(layout)
        .flat_members()
        .into_iter()
        .filter(|(_, m)| m.nested.is_none() && m.size > 0)
        .filter_map(|(_, m)| {
            let name = m.name?;
            let start = sym.place.saturating_add(m.offset);
            (name != except
                && start < line.saturating_add(ls)
                && start.saturating_add(m.size) > line)
                .then(|| name.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::InputFile;
    use crate::load::LoadOptions;
    use crate::perf::c2c::{Access, HotLine};

    /// testdata/check/base.elf (FACTS.md): hot_path ffffffff81000000 (0x11 B),
    /// cold_path ffffffff81000020 (0x13 B), a_long_function_name_cut_by_perf_c2c
    /// ffffffff81000050 (0xa B).
    fn base() -> Option<InputFile> {
        let p = crate::fixtures::testdata()?.join("check/base.elf");
        Some(InputFile::open(&p).unwrap())
    }

    fn report(code: &[(u64, &str)]) -> C2cReport {
        C2cReport {
            lines: vec![HotLine {
                index: 0,
                address: 0xffff_ffff_a000_0000,
                hitm: 1,
                share: None,
                accesses: code
                    .iter()
                    .map(|&(a, s)| Access {
                        offset: 0,
                        percents: Vec::new(),
                        code_address: Some(a),
                        symbol: Some(s.to_string()),
                        object: None,
                        source: None,
                    })
                    .collect(),
            }],
        }
    }

    #[test]
    fn majority_offset_wins_and_cut_symbols_match_as_prefixes() {
        let Some(file) = base() else { return };
        let img = file
            .load(&LoadOptions {
                dwarf: false,
                ..LoadOptions::default()
            })
            .unwrap();
        let off = 0x1c00_0000;
        let r = report(&[
            (0xffff_ffff_8100_0004 + off, "hot_path"),
            (
                0xffff_ffff_8100_0054 + off,
                "a_long_function_name_cut_by_pe",
            ),
            // Names a function, but its address fits another offset: outvoted.
            (0xffff_ffff_8100_0022 + 0x20_0000, "cold_path"),
            (0xffff_ffff_8100_0000, "not_in_the_image"),
        ]);
        assert_eq!(
            infer_kaslr(&r, &img),
            Ok(Kaslr::Inferred {
                offset: off,
                agreeing: 2,
                of: 3
            })
        );
    }

    #[test]
    fn regions_outside_the_image() {
        let r = |a| region("x86_64", a);
        assert_eq!(r(0xffff_8c4a_0123_4500), Some(Region::Heap));
        assert_eq!(r(0xff2a_0000_4c8a_3b00), Some(Region::Heap)); // 5-level paging
        assert_eq!(r(0xffff_ffff_c0a0_1000), Some(Region::Modules));
        assert_eq!(r(0xffff_fe00_0000_1000), Some(Region::Other)); // cpu_entry_area
        assert_eq!(r(0x0000_55c8_971f_0080), Some(Region::Other)); // user space
        assert_eq!(region("aarch64", 0xffff_8000_81c5_1000), None);
    }

    #[test]
    fn no_function_named_means_no_inference() {
        let Some(file) = base() else { return };
        let img = file
            .load(&LoadOptions {
                dwarf: false,
                ..LoadOptions::default()
            })
            .unwrap();
        // 0x40 into cold_path's 2 MiB slot: past its 0x13 bytes at every offset.
        let r = report(&[(0xffff_ffff_8100_0060 + 0x20_0000, "cold_path")]);
        assert_eq!(
            infer_kaslr(&r, &img).unwrap_err().to_string(),
            "cannot infer the KASLR offset: no code address in the report falls in a \
             function of the image it names; give --kaslr-offset HEX"
        );
        // Short names are never taken as cut.
        let r = report(&[(0xffff_ffff_8100_0004, "hot_pa")]);
        assert_eq!(infer_kaslr(&r, &img), Err(NoKaslrOffset));
    }
}
