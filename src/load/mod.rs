//! Loading: map a vmlinux once, read its sections and symbols with `object`, its types
//! and global variables with `gimli` (units in parallel), and build an `Image`.

mod ctypes;
mod dies;
mod dwarf;
mod elf;
mod layouts;
mod units;
mod walk;

pub use walk::Walked;

use std::fs::File;
use std::path::{Path, PathBuf};

use globset::GlobSet;
use memmap2::Mmap;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::model::Image;

/// Which struct layouts to build.
#[derive(Debug, Clone, Default)]
pub enum StructFilter {
    /// Every struct and union (what a diff needs).
    #[default]
    All,
    /// None, except those that variables point at when variables are loaded.
    None,
    /// Those whose name matches.
    Matching(GlobSet),
}

impl StructFilter {
    pub(crate) fn accepts(&self, name: &str) -> bool {
        match self {
            StructFilter::All => true,
            StructFilter::None => false,
            StructFilter::Matching(set) => set.is_match(name),
        }
    }
}

/// What to load: loading only what a query needs keeps `show` fast.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Override of the target's cache line size.
    pub line_size: Option<u64>,
    /// Read DWARF at all (structs and variables).
    pub dwarf: bool,
    pub structs: StructFilter,
    /// Read global variables (and the structs they are instances of).
    pub variables: bool,
    /// Typedef names to follow to the anonymous struct/union they name (`atomic_t`),
    /// as `pahole -C` does; their layouts carry the typedef's name.
    pub typedefs: Vec<String>,
    /// Every typedef that names an anonymous struct/union, as `typedefs` would (what a
    /// snapshot keeps, so `show --struct atomic_t` works on it).
    pub all_typedefs: bool,
    /// Build what pahole's text needs (spellings, members' struct padding, packed
    /// structs); `show --struct`/`--symbol` want it, a diff does not.
    pub pahole_text: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            line_size: None,
            dwarf: true,
            structs: StructFilter::All,
            typedefs: Vec::new(),
            all_typedefs: false,
            pahole_text: true,
            variables: true,
        }
    }
}

/// An input file mapped into memory; the `Image` borrows names from it.
pub struct InputFile {
    path: PathBuf,
    map: Mmap,
    /// Decompressed or relocated copies of the DWARF sections (by index in
    /// `elf::DWARF_SECTIONS`), alive as long as the file; `OnceLock` keeps the file
    /// `Sync` so two builds load concurrently.
    owned: [OnceLock<Vec<u8>>; elf::DWARF_SECTIONS.len()],
    /// For a snapshot (`layout-diff snapshot`): its decompressed payload, which the
    /// `Image` borrows names from.
    snapshot: Option<Vec<u8>>,
}

impl InputFile {
    /// Maps `path`; fails on a missing path, a directory or an empty file.
    pub fn open(path: &Path) -> Result<InputFile> {
        let io = |err| Error::Io {
            path: path.to_path_buf(),
            err,
        };
        let meta = std::fs::metadata(path).map_err(io)?;
        if meta.is_dir() {
            return Err(Error::IsDirectory {
                path: path.to_path_buf(),
            });
        }
        if meta.len() == 0 {
            return Err(Error::Empty {
                path: path.to_path_buf(),
            });
        }
        let file = File::open(path).map_err(io)?;
        // SAFETY: the map is read-only and private to this process. A concurrent
        // truncation of the file by another process could fault; as with every
        // mmap-based reader (ripgrep, addr2line), that is accepted for speed.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        let snapshot = crate::snapshot::is_snapshot(&map)
            .then(|| crate::snapshot::payload(path, &map))
            .transpose()?;
        Ok(InputFile {
            path: path.to_path_buf(),
            map,
            owned: Default::default(),
            snapshot,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the file is a snapshot rather than an ELF file.
    pub fn is_snapshot(&self) -> bool {
        self.snapshot.is_some()
    }

    /// Source lines of code addresses, from the line programs (read lazily by addr2line,
    /// one unit at a time). `None` when the file has no DWARF.
    /// A snapshot has them only when written with `--with-lines` (else `None`).
    pub fn source_lines(&self) -> Result<Option<SourceLines<'_>>> {
        if let Some(payload) = &self.snapshot {
            return Ok(crate::snapshot::lines(&self.path, payload)?
                .map(|table| SourceLines(Lines::Table(table))));
        }
        let elf = elf::read(&self.path, &self.map, &self.owned)?;
        let Some(debug) = elf.debug else {
            return Ok(None);
        };
        let endian = if debug.little_endian {
            gimli::RunTimeEndian::Little
        } else {
            gimli::RunTimeEndian::Big
        };
        let dwarf = gimli::Dwarf::load(|id| -> std::result::Result<_, ()> {
            let data = debug.sections.get(id.name()).copied().unwrap_or(&[]);
            Ok(gimli::EndianSlice::new(data, endian))
        })
        .map_err(|_| Error::Input {
            path: self.path.clone(),
            message: "cannot load DWARF sections".into(),
        })?;
        let context = addr2line::Context::from_dwarf(dwarf).map_err(|e| Error::Dwarf {
            path: self.path.clone(),
            section: ".debug_info",
            offset: 0,
            message: e.to_string(),
        })?;
        Ok(Some(SourceLines(Lines::Dwarf(Box::new(context)))))
    }

    /// Reads the image as `options` asks.
    pub fn load(&self, options: &LoadOptions) -> Result<Image<'_>> {
        if let Some(payload) = &self.snapshot {
            return crate::snapshot::image(&self.path, payload, options);
        }
        let elf = elf::read(&self.path, &self.map, &self.owned)?;
        let line_size = options
            .line_size
            .unwrap_or_else(|| elf::default_line_size(&elf.arch));
        let mut image = Image {
            path: self.path.clone(),
            arch: elf.arch,
            big_endian: elf.big_endian,
            file_kind: elf.file_kind,
            build_id: elf.build_id,
            line_size,
            line_size_overridden: options.line_size.is_some(),
            has_debug_info: elf.debug.is_some(),
            percpu_base: elf.percpu_base,
            boundaries: elf.boundaries,
            function_prefix: elf.function_prefix,
            sections: elf.sections,
            symbols: elf.symbols,
            structs: Vec::new(),
            variables: Vec::new(),
            units: 0,
        };
        if options.dwarf
            && let Some(debug) = &elf.debug
        {
            let types = dwarf::read(&self.path, debug, options)?;
            units::assign(&mut image.symbols, &types.sources);
            image.structs = types.structs;
            image.variables = types.variables;
            image.units = types.units;
        }
        Ok(image)
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
