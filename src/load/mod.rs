//! Loading: map a vmlinux once, read its sections and symbols with `object`, its types
//! and global variables with `gimli` (units in parallel), and build an `Image`.

mod btf;
mod ctypes;
mod dies;
mod dwarf;
mod elf;
mod layouts;
mod lookup;
pub mod options;
mod symlist;
mod unit;
mod units;
mod walk;

pub use walk::Walked;

use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::model::Image;
pub use options::{LoadOptions, StructFilter};

/// An input file mapped into memory; the `Image` borrows names from it.
pub struct InputFile {
    path: PathBuf,
    map: Mmap,
    /// Decompressed or relocated copies of the DWARF sections (by index in
    /// `elf::DWARF_SECTIONS`), alive as long as the file; `OnceLock` keeps the file
    /// `Sync` so two builds load concurrently.
    owned: [OnceLock<Vec<u8>>; elf::DWARF_SECTIONS.len()],
    /// For a snapshot (`layout-diff snapshot`): its decompressed names, which the
    /// `Image` borrows, and where its records are in `map`.
    snapshot: Option<crate::snapshot::Opened>,
    /// A symbol list (`System.map`, `/proc/kallsyms`) that gives the addresses: of a
    /// raw BTF blob, or instead of an ELF's own symbol table.
    symbol_list: Option<(PathBuf, String)>,
}

/// What `snapshot::write` writes of one input (see `InputFile::for_snapshot`).
pub struct ForSnapshot<'d> {
    pub image: Image<'d>,
    pub elf_files: Vec<Option<&'d str>>,
    pub lines: Option<Vec<(u64, String)>>,
}

impl InputFile {
    /// Maps `path`; fails on a missing path, a directory or an empty file. A snapshot
    /// is checked and its names decompressed too (`open_snapshot`).
    pub fn open(path: &Path) -> Result<InputFile> {
        let mut file = Self::map(path)?;
        file.open_snapshot()?;
        Ok(file)
    }

    /// `open` without checking a snapshot yet: what fails at once (a missing path, a
    /// directory, an empty file), before any build is loaded.
    pub fn map(path: &Path) -> Result<InputFile> {
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
        Ok(InputFile {
            path: path.to_path_buf(),
            map,
            owned: Default::default(),
            snapshot: None,
            symbol_list: None,
        })
    }

    /// For a snapshot: checks its header and checksum and decompresses its names (the
    /// second half of `open`).
    pub fn open_snapshot(&mut self) -> Result<()> {
        if self.snapshot.is_none() && crate::snapshot::is_snapshot(&self.map) {
            self.snapshot = Some(crate::snapshot::open(&self.path, &self.map)?);
        }
        Ok(())
    }

    /// An input held in memory (fuzzing, tests): `name` stands for its path in errors.
    pub fn from_bytes(name: &Path, bytes: &[u8]) -> Result<InputFile> {
        if bytes.is_empty() {
            return Err(Error::Empty {
                path: name.to_path_buf(),
            });
        }
        let io = |err| Error::Io {
            path: name.to_path_buf(),
            err,
        };
        let mut anon = memmap2::MmapMut::map_anon(bytes.len()).map_err(io)?;
        anon.copy_from_slice(bytes);
        Ok(InputFile {
            path: name.to_path_buf(),
            map: anon.make_read_only().map_err(io)?,
            owned: Default::default(),
            snapshot: None,
            symbol_list: None,
        })
    }

    /// `with_symbols` with the list's text given (fuzzing, tests).
    pub fn with_symbol_text(mut self, list: &Path, text: String) -> Result<InputFile> {
        symlist::parse(list, &text)?;
        self.symbol_list = Some((list.to_path_buf(), text));
        Ok(self)
    }

    /// Takes addresses from a symbol list (`System.map` or `/proc/kallsyms` format).
    pub fn with_symbols(mut self, list: &Path) -> Result<InputFile> {
        let text = std::fs::read(list).map_err(|err| Error::Io {
            path: list.to_path_buf(),
            err,
        })?;
        let text = String::from_utf8(text).map_err(|_| Error::Input {
            path: list.to_path_buf(),
            message: "not text (expected a System.map or kallsyms list)".into(),
        })?;
        self.symbol_list = Some((list.to_path_buf(), text));
        Ok(self)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What a snapshot keeps of this input (a vmlinux): its image read in full, its
    /// symbols' file names as the ELF alone gives them, and with `with_lines` the
    /// source lines `show --line` prints. `snapshot::write` writes them.
    pub fn for_snapshot(&self, with_lines: bool) -> Result<ForSnapshot<'_>> {
        let full = LoadOptions {
            all_typedefs: true,
            ..LoadOptions::default()
        };
        let elf_only = LoadOptions {
            dwarf: false,
            ..LoadOptions::default()
        };
        let (image, bare) = rayon::join(|| self.load(&full), || self.load(&elf_only));
        let (image, bare) = (image?, bare?);
        let elf_files = if bare.symbols.len() == image.symbols.len() {
            bare.symbols.iter().map(|s| s.file).collect()
        } else {
            Vec::new()
        };
        let lines = if with_lines {
            snapshot_lines(self, &image)?
        } else {
            None
        };
        Ok(ForSnapshot {
            image,
            elf_files,
            lines,
        })
    }

    /// True when the file is a snapshot rather than an ELF file.
    pub fn is_snapshot(&self) -> bool {
        self.snapshot.is_some()
    }

    /// Source lines of code addresses, from the line programs (read lazily by addr2line,
    /// one unit at a time). `None` when the file has no DWARF.
    /// A snapshot has them only when written with `--with-lines` (else `None`).
    pub fn source_lines(&self) -> Result<Option<SourceLines<'_>>> {
        if let Some(opened) = &self.snapshot {
            return Ok(crate::snapshot::lines(&self.path, opened)?
                .map(|table| SourceLines(Lines::Table(table))));
        }
        let Some(debug) = elf::read_dwarf(&self.path, &self.map, &self.owned)? else {
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
        if let Some(opened) = &self.snapshot {
            return crate::snapshot::image(&self.path, opened, &self.map, options);
        }
        if let Some(how) = compressed(&self.map) {
            return Err(Error::Input {
                path: self.path.clone(),
                message: format!(
                    "{how}-compressed (a distro's .ko.{}?); decompress it first: {}",
                    if how == "xz" { "xz" } else { "zst" },
                    if how == "xz" {
                        "xz -dk FILE"
                    } else {
                        "zstd -d FILE"
                    }
                ),
            });
        }
        if !self.map.starts_with(b"\x7fELF") && btf::is_btf(&self.map) {
            return self.load_raw_btf(options);
        }
        let mut elf = elf::read(&self.path, &self.map, &self.owned)?;
        if let Some((list, text)) = &self.symbol_list {
            elf.symbols = symlist::parse(list, text)?;
        }
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
        } else if options.dwarf
            && let Some(data) = elf.btf
        {
            let types = btf::read(&self.path, data, elf.percpu_address, options)?;
            // No units: locals are named by their `STT_FILE`, as without DWARF.
            units::assign(&mut image.symbols, &dwarf::UnitSources::default());
            image.structs = types.structs;
            image.variables = types.variables;
            if self.symbol_list.is_some() {
                size_percpu_from_btf(&mut image);
            }
        }
        Ok(image)
    }
}

impl InputFile {
    /// A raw BTF blob (`objcopy -O binary --only-section=.BTF`, `/sys/kernel/btf/vmlinux`):
    /// layouts from the blob, addresses from the symbol list (none without one).
    fn load_raw_btf(&self, options: &LoadOptions) -> Result<Image<'_>> {
        let symbols = match &self.symbol_list {
            Some((list, text)) => symlist::parse(list, text)?,
            None => Vec::new(),
        };
        let percpu_base = symbols
            .iter()
            .any(|s| s.space == crate::model::Space::Percpu)
            .then_some(0);
        let mut image = Image {
            path: self.path.clone(),
            arch: "x86_64".into(),
            big_endian: self.map.starts_with(&[0xeb, 0x9f]),
            file_kind: "btf",
            build_id: None,
            line_size: options.line_size.unwrap_or(64),
            line_size_overridden: options.line_size.is_some(),
            has_debug_info: true,
            types_from: crate::model::TypesFrom::Btf,
            percpu_base,
            boundaries: Vec::new(),
            function_prefix: 0,
            sections: Vec::new(),
            symbols,
            structs: Vec::new(),
            variables: Vec::new(),
            units: 0,
        };
        if options.dwarf {
            let types = btf::read(&self.path, &self.map, Some(0), options)?;
            image.structs = types.structs;
            image.variables = types.variables;
        }
        size_percpu_from_btf(&mut image);
        Ok(image)
    }
}

/// `xz` or `zstd` when the file is compressed with it (modules are installed as
/// `.ko.xz` / `.ko.zst`).
fn compressed(data: &[u8]) -> Option<&'static str> {
    if data.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Some("xz")
    } else if data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some("zstd")
    } else {
        None
    }
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

/// `file:line` at the start of every function and every `snapshot::LINE_GRANULE` boundary inside
/// it (ordinary address space only; per-CPU offsets are not code).
fn snapshot_lines(input: &InputFile, image: &Image<'_>) -> Result<Option<Vec<(u64, String)>>> {
    use crate::model::{Space, SymbolKind};
    let Some(lines) = input.source_lines()? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for s in image
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Function && s.space == Space::Global)
    {
        let end = s.place.saturating_add(s.size);
        let mut at = s.place;
        while at < end.max(s.place + 1) {
            if let Some(loc) = lines.find(at) {
                out.push((at, loc));
            }
            at = (at / crate::snapshot::LINE_GRANULE + 1)
                .saturating_mul(crate::snapshot::LINE_GRANULE);
        }
    }
    out.sort();
    out.dedup_by_key(|(a, _)| *a);
    Ok(Some(out))
}
