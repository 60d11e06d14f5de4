//! A developer's count of what a BTF-first load would still need DWARF for (not a
//! command of the tool; issue 32, item 3): `cargo run --release --example dwarf_census
//! -- VMLINUX` prints how many compile units declare `DW_AT_alignment` in their
//! abbreviations (BTF carries no alignment attribute, so only units whose abbreviations
//! lack it could be left unwalked) and how many of the file's DIEs those units hold,
//! and how many arrays have more than one dimension (BTF flattens `[16][16]` to `[256]`).

use anyhow::{Context, Result};
use gimli::{EndianSlice, RunTimeEndian, constants as dw};
use object::{Object, ObjectSection};

/// What one unit holds.
#[derive(Default)]
struct Census {
    units: u64,
    dies: u64,
    aligned_units: u64,
    aligned_unit_dies: u64,
    aligned_entries: u64,
    multi_dimensional: u64,
}

fn main() -> Result<()> {
    let path = std::env::args()
        .nth(1)
        .context("usage: dwarf_census VMLINUX")?;
    let file = std::fs::File::open(&path).with_context(|| format!("{path}: cannot open"))?;
    // SAFETY: read-only map of a file this process does not write.
    let map =
        unsafe { memmap2::Mmap::map(&file) }.with_context(|| format!("{path}: cannot map"))?;
    let elf = object::File::parse(&*map).with_context(|| format!("{path}: not an ELF file"))?;
    let endian = if elf.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let section = |id: gimli::SectionId| -> Result<EndianSlice<'_, RunTimeEndian>, gimli::Error> {
        let data = elf
            .section_by_name(id.name())
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]);
        Ok(EndianSlice::new(data, endian))
    };
    let dwarf = gimli::Dwarf::load(section)?;
    let mut census = Census::default();
    let mut headers = dwarf.units();
    while let Some(header) = headers.next()? {
        let unit = dwarf.unit(header)?;
        census.units += 1;
        // GCC numbers a unit's abbreviations 1, 2, 3, ... without gaps.
        let aligned_abbrev = (1..)
            .map_while(|code| unit.abbreviations.get(code))
            .any(|a| {
                a.attributes()
                    .iter()
                    .any(|s| s.name() == dw::DW_AT_alignment)
            });
        let (mut dies, mut open_array) = (0u64, None::<(isize, u32)>);
        let mut entries = unit.entries();
        while let Some(die) = entries.next_dfs()? {
            dies += 1;
            let depth = die.depth();
            // An array's subranges are its children: count them until the walk leaves it.
            if let Some((at, dims)) = open_array
                && depth <= at
            {
                census.multi_dimensional += u64::from(dims > 1);
                open_array = None;
            }
            if die.attr(dw::DW_AT_alignment).is_some() {
                census.aligned_entries += 1;
            }
            match die.tag() {
                dw::DW_TAG_array_type => open_array = Some((depth, 0)),
                dw::DW_TAG_subrange_type => {
                    if let Some((at, dims)) = open_array
                        && depth == at + 1
                    {
                        open_array = Some((at, dims + 1));
                    }
                }
                _ => {}
            }
        }
        if let Some((_, dims)) = open_array {
            census.multi_dimensional += u64::from(dims > 1);
        }
        census.dies += dies;
        if aligned_abbrev {
            census.aligned_units += 1;
            census.aligned_unit_dies += dies;
        }
    }
    let share = |part: u64, whole: u64| 100.0 * part as f64 / whole.max(1) as f64;
    println!("{path}");
    println!("units: {}", census.units);
    println!(
        "units whose abbreviations declare DW_AT_alignment: {} ({:.1}%)",
        census.aligned_units,
        share(census.aligned_units, census.units)
    );
    println!(
        "DIEs: {}; in those units: {} ({:.1}%)",
        census.dies,
        census.aligned_unit_dies,
        share(census.aligned_unit_dies, census.dies)
    );
    println!(
        "entries carrying DW_AT_alignment: {}",
        census.aligned_entries
    );
    println!(
        "arrays of more than one dimension: {}",
        census.multi_dimensional
    );
    Ok(())
}
