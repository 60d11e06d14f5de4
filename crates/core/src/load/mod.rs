//! Loading builds: from the bytes of an ELF file (opened by `input`), its sections and
//! symbols with `object` and its types and global variables with `gimli` (units in
//! parallel) or from its `.BTF`; from a raw BTF blob and a symbol list. Each returns an
//! `Image`.

mod around;
mod btf;
mod code;
mod common;
mod ctypes;
mod dies;
mod dwarf;
mod elf;
mod kernel_version;
mod layouts;
mod lookup;
pub mod options;
mod symlist;
mod tree;
mod unit;
mod units;
mod walk;

pub use code::code_sections;
pub use common::common_ground;
pub use symlist::SymbolList;
pub use walk::{Walked, walk_dies};

use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::model::Image;
pub use options::{LoadOptions, StructFilter};

/// Decompressed or relocated copies of an ELF file's DWARF sections (by index in
/// `elf::DWARF_SECTIONS`), made on first use and kept as long as the file, which the
/// `Image` borrows from; `OnceLock` keeps the file `Sync` so two builds load
/// concurrently.
#[derive(Default)]
pub struct DwarfCopies([OnceLock<Vec<u8>>; elf::DWARF_SECTIONS.len()]);

/// The cache line size of a load: `--line-size` when given (and so overridden), else
/// the target's.
fn line_size(arch: &str, options: &LoadOptions) -> (u64, bool) {
    match options.line_size {
        Some(given) => (given, true),
        None => (elf::default_line_size(arch), false),
    }
}

/// The image of an ELF file (`bytes`, at `path`) as `options` asks: sections and
/// symbols from the ELF (or from `symbols`, a list given beside it), types from its
/// DWARF, else from its `.BTF` section.
pub fn elf_image<'d>(
    path: &Path,
    bytes: &'d [u8],
    copies: &'d DwarfCopies,
    symbols: Option<&'d SymbolList>,
    options: &LoadOptions,
) -> Result<Image<'d>> {
    let mut elf = elf::read(path, bytes, &copies.0)?;
    let sizes_inferred = symbols.is_some();
    if let Some(list) = symbols {
        elf.symbols = list.symbols()?;
        within_sections(&mut elf.symbols, &elf.sections);
    }
    let (line_size, line_size_overridden) = line_size(&elf.arch, options);
    let mut image = Image {
        big_endian: elf.big_endian,
        file_kind: elf.file_kind,
        build_id: elf.build_id,
        kernel_version: elf.kernel_version,
        line_size_overridden,
        sizes_inferred,
        has_debug_info: elf.debug.is_some() || elf.btf.is_some(),
        types_from: match (&elf.debug, &elf.btf) {
            (Some(_), _) => crate::model::TypesFrom::Dwarf,
            (None, Some(_)) => crate::model::TypesFrom::Btf,
            (None, None) => crate::model::TypesFrom::None,
        },
        percpu_base: elf.percpu_base,
        boundaries: elf.boundaries,
        function_prefix: elf.function_prefix,
        sections: elf.sections,
        symbols: elf.symbols,
        ..Image::new(path.to_path_buf(), elf.arch, line_size)
    };
    let (code, pointers) = match options.code || options.typed {
        true => (
            code::code_sections(path, bytes)?,
            code::pointer_sections(path, bytes)?,
        ),
        false => (Vec::new(), Vec::new()),
    };
    if options.dwarf
        && let Some(debug) = &elf.debug
    {
        let around = around::around(options, &image.symbols, image.line_size);
        // The code is read beside the DWARF: it needs the symbols only.
        let reader = debug.dwarf(path)?;
        let ((access, typed), types) = rayon::join(
            || {
                rayon::join(
                    || crate::access::build(&image, &code, &pointers),
                    || match options.typed {
                        true => crate::typed::build(&image, &code, &reader),
                        false => crate::typed::TypedMap::default(),
                    },
                )
            },
            || dwarf::read(path, debug, options, around.as_ref()),
        );
        image.access = access;
        image.typed = typed;
        let types = types?;
        units::assign(&mut image.symbols, &types.sources);
        image.structs = types.structs.into_iter().map(Arc::new).collect();
        image.variables = types.variables;
        image.units = types.units;
        image.function_alignments = types.function_alignments;
    } else if options.dwarf
        && let Some(data) = elf.btf
    {
        let types = btf::read(path, data, elf.percpu_address, options)?;
        // No units: locals are named by their `STT_FILE`, as without DWARF.
        units::assign(&mut image.symbols, &dwarf::UnitSources::default());
        image.structs = types.structs.into_iter().map(Arc::new).collect();
        image.variables = types.variables;
        if symbols.is_some() {
            size_percpu_from_btf(&mut image);
        }
    }
    if options.code && !image.access.supported {
        image.access = crate::access::build(&image, &code, &pointers);
    }
    Ok(image)
}

/// The image of a raw BTF blob (`objcopy -O binary --only-section=.BTF`,
/// `/sys/kernel/btf/vmlinux`): layouts from the blob, addresses from the symbol list
/// (none without one). Neither names the target, so its `arch` is given (the caller's
/// documented default) and its byte order is the blob's.
pub fn raw_btf_image<'d>(
    path: &Path,
    bytes: &'d [u8],
    arch: &str,
    big_endian: bool,
    symbols: Option<&'d SymbolList>,
    options: &LoadOptions,
) -> Result<Image<'d>> {
    let sizes_inferred = symbols.is_some();
    let symbols = match symbols {
        Some(list) => list.symbols()?,
        None => Vec::new(),
    };
    let percpu_base = symbols
        .iter()
        .any(|s| s.space == crate::model::Space::Percpu)
        .then_some(0);
    let (line_size, line_size_overridden) = line_size(arch, options);
    let mut image = Image {
        big_endian,
        file_kind: "btf",
        line_size_overridden,
        sizes_inferred,
        has_debug_info: true,
        types_from: crate::model::TypesFrom::Btf,
        percpu_base,
        symbols,
        ..Image::new(path.to_path_buf(), arch.to_string(), line_size)
    };
    if options.dwarf {
        let types = btf::read(path, bytes, Some(0), options)?;
        image.structs = types.structs.into_iter().map(Arc::new).collect();
        image.variables = types.variables;
    }
    if !image
        .symbols
        .iter()
        .any(|s| s.space == crate::model::Space::Percpu)
    {
        // The per-CPU variables are the blob's only per-CPU addresses (a kallsyms of
        // a kernel without CONFIG_KALLSYMS_ALL lists none): read them anyway.
        let read_them = !options.dwarf || !options.variables;
        if read_them {
            let just_variables = LoadOptions {
                variables: true,
                structs: StructFilter::None,
                ..options.clone()
            };
            let kept = std::mem::take(&mut image.variables);
            image.variables = btf::read(path, bytes, Some(0), &just_variables)?.variables;
            percpu_from_datasec(&mut image);
            image.variables = kept;
        } else {
            percpu_from_datasec(&mut image);
        }
    }
    size_percpu_from_btf(&mut image);
    Ok(image)
}

/// A list's symbols beside an ELF: each placed in the section that holds its address
/// and its inferred size (the distance to the next address) bounded by that section's
/// end, as the ELF's own sizes are; a per-CPU one by the per-CPU section's size.
fn within_sections<'d>(
    symbols: &mut [crate::model::Symbol<'d>],
    sections: &[crate::model::Section<'d>],
) {
    let mut placed: Vec<&crate::model::Section<'d>> = sections
        .iter()
        .filter(|s| s.address != 0 && s.size != 0)
        .collect();
    placed.sort_by_key(|s| s.address);
    let percpu = sections.iter().find(|s| s.name == elf::PERCPU_SECTION);
    for s in symbols.iter_mut() {
        let holder = match s.space {
            crate::model::Space::Percpu => percpu
                .filter(|p| s.place < p.size)
                .map(|p| (p.address.saturating_add(p.size), p.name)),
            crate::model::Space::Global => {
                let i = placed.partition_point(|x| x.address <= s.address);
                i.checked_sub(1)
                    .map(|i| placed[i])
                    .map(|sec| (sec.address.saturating_add(sec.size), sec.name))
                    .filter(|&(end, _)| s.address < end)
            }
        };
        match holder {
            Some((end, name)) => {
                s.section = name;
                s.size = s.size.min(end.saturating_sub(s.address));
            }
            // In no section (a linker mark such as `_end`): no bytes of its own.
            None => s.size = 0,
        }
    }
}

/// Without per-CPU symbols from a list, a raw blob still places its per-CPU
/// variables: BTF's `.data..percpu` DATASEC gives each one's offset in the per-CPU
/// area (linked at 0) and its type's size, so `show --percpu --line` works on
/// `/sys/kernel/btf/vmlinux` alone. Their sizes are their types', not inferred.
fn percpu_from_datasec(image: &mut Image<'_>) {
    let symbols: Vec<crate::model::Symbol<'_>> = image
        .variables
        .iter()
        .map(|v| crate::model::Symbol {
            name: v.name,
            file: None,
            unit: None,
            compile_unit: None,
            group: 0,
            kind: crate::model::SymbolKind::Object,
            binding: crate::model::Binding::Global,
            section: elf::PERCPU_SECTION,
            address: v.address,
            size: v.size.unwrap_or(0),
            space: crate::model::Space::Percpu,
            place: v.address,
        })
        .collect();
    if symbols.is_empty() {
        return;
    }
    image.symbols.extend(symbols);
    image
        .symbols
        .sort_by(|a, b| (a.space, a.address, a.name).cmp(&(b.space, b.address, b.name)));
    image.percpu_base = Some(0);
}

/// Source lines of code addresses of an ELF file, from its line programs (read lazily
/// by addr2line, one unit at a time). `None` when the file has no DWARF.
pub fn source_lines<'d>(
    path: &Path,
    bytes: &'d [u8],
    copies: &'d DwarfCopies,
) -> Result<Option<SourceLines<'d>>> {
    let Some(debug) = elf::read_dwarf(path, bytes, &copies.0)? else {
        return Ok(None);
    };
    let dwarf = debug.dwarf(path)?;
    let context = addr2line::Context::from_dwarf(dwarf).map_err(|e| Error::Dwarf {
        path: path.to_path_buf(),
        section: ".debug_info",
        offset: 0,
        message: e.to_string(),
    })?;
    Ok(Some(SourceLines(Lines::Dwarf(Box::new(context)))))
}

/// When one build's locals carry file names (`STT_FILE`) and the other's do not (an
/// `objcopy --strip-debug` copy, a symbol list), locals of both are named by their bare
/// name, so that the same static is paired across the two instead of being reported
/// removed and added. Returns true when it did so.
pub fn align_local_names(a: &mut Image<'_>, b: &mut Image<'_>) -> bool {
    let named = |i: &Image<'_>| {
        i.symbols
            .iter()
            .any(|s| s.binding == crate::model::Binding::Local && s.file.is_some())
    };
    if named(a) == named(b) {
        return false;
    }
    for s in a.symbols.iter_mut() {
        (s.file, s.unit) = (None, None);
    }
    for s in b.symbols.iter_mut() {
        (s.file, s.unit) = (None, None);
    }
    // Without file names, two locals of one name at one place are one symbol (as the
    // ELF reader keeps them on the side that had no names), so both sides agree.
    a.symbols
        .dedup_by(|x, y| x.space == y.space && x.place == y.place && x.name == y.name);
    b.symbols
        .dedup_by(|x, y| x.space == y.space && x.place == y.place && x.name == y.name);
    true
}

/// A symbol list has no sizes: a per-CPU symbol that BTF describes takes its type's.
fn size_percpu_from_btf(image: &mut Image<'_>) {
    let sizes: std::collections::HashMap<&str, u64> = image
        .variables
        .iter()
        .filter_map(|v| Some((v.name, v.size?)))
        .collect();
    for s in &mut image.symbols {
        if s.space == crate::model::Space::Percpu
            && let Some(&size) = sizes.get(s.name)
        {
            s.size = size;
        }
    }
}

/// Maps code addresses to `file:line`.
pub struct SourceLines<'d>(Lines<'d>);

enum Lines<'d> {
    /// The line programs of a vmlinux.
    Dwarf(Box<addr2line::Context<gimli::EndianSlice<'d, gimli::RunTimeEndian>>>),
    /// A snapshot's table: exact addresses (function starts and 64-byte boundaries).
    Table(Vec<(u64, String)>),
}

impl SourceLines<'_> {
    /// Source lines from a table of exact addresses, in address order (a snapshot's).
    pub fn from_table(table: Vec<(u64, String)>) -> Self {
        SourceLines(Lines::Table(table))
    }

    /// `file:line` of the code at `address`, when the line tables know it.
    pub fn find(&self, address: u64) -> Option<String> {
        match &self.0 {
            Lines::Dwarf(context) => {
                let loc = context.find_location(address).ok()??;
                Some(format!("{}:{}", loc.file?, loc.line?))
            }
            Lines::Table(table) => {
                let i = table.binary_search_by_key(&address, |(a, _)| *a).ok()?;
                Some(table[i].1.clone())
            }
        }
    }
}
