//! Inputs: a file is mapped (or read, when it cannot be mapped) once and its kind
//! decided once, when it is opened (an ELF file, a raw BTF blob with its symbol list,
//! or a snapshot); loading then hands it to the one reader of that kind (`load` for
//! ELF and BTF, `snapshot` for snapshots), each of which returns an `Image`.

pub(crate) mod bytes;
mod kind;

use bytes::Bytes;
pub use kind::{Compression, Kind, decide};

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::load::{self, DwarfCopies, LoadOptions, SourceLines, SymbolList, Walked};
use crate::model::Image;
use crate::snapshot;

/// The architecture a raw BTF blob is taken for: neither BTF's header nor a symbol
/// list names one, and the kernels that expose `/sys/kernel/btf/vmlinux` are x86_64
/// far more often than not. Its line size follows from it (64 bytes) unless
/// `--line-size` gives one.
pub const RAW_BTF_ARCH: &str = "x86_64";

/// An input file mapped into memory (or read, see `Bytes`) and opened as its kind; the
/// `Image` borrows names from it.
pub struct InputFile {
    path: PathBuf,
    map: Bytes,
    opened: Opened,
    /// A symbol list (`System.map`, `/proc/kallsyms`) that gives the addresses: of a
    /// raw BTF blob, or instead of an ELF's own symbol table.
    symbol_list: Option<SymbolList>,
    /// The vmlinux at `path` is read through its snapshot from the cache
    /// (`through_cache`): `map` holds that snapshot.
    cached: bool,
}

/// What opening found, by kind.
enum Opened {
    Elf(Box<DwarfCopies>),
    RawBtf {
        big_endian: bool,
    },
    /// A snapshot's checked header and decompressed names (the `Image` borrows them).
    Snapshot(snapshot::Opened),
    /// A kind no reader takes; loading refuses it.
    Refused(Kind),
}

/// What `snapshot::write` writes of one input (see `InputFile::for_snapshot`).
pub struct ForSnapshot<'d> {
    /// The build, loaded.
    pub image: Image<'d>,
    /// Its symbols' file names as the ELF alone gives them, in `image.symbols` order
    /// (empty when the two loads do not line up).
    pub elf_files: Vec<Option<&'d str>>,
    /// The source lines to keep, when asked for.
    pub lines: Option<Vec<(u64, String)>>,
}

impl InputFile {
    /// Maps `path` (reads it when it cannot be mapped: a FIFO, a sysfs file) and opens
    /// it as its kind: fails on a missing path, a directory, an empty file, a stream
    /// past `bytes::READ_LIMIT`, or a snapshot whose header or checksum is wrong.
    pub fn open(path: &Path) -> Result<InputFile> {
        let map = Bytes::open(path)?;
        Self::opened(path, map)
    }

    /// Opens two files, both mapped before either is opened further: a missing one
    /// fails at once, before the other is read.
    pub fn open_both(a: &Path, b: &Path) -> Result<(InputFile, InputFile)> {
        let (map_a, map_b) = (Bytes::open(a)?, Bytes::open(b)?);
        Ok((Self::opened(a, map_a)?, Self::opened(b, map_b)?))
    }

    /// An input held in memory (fuzzing, tests): `name` stands for its path in errors.
    pub fn from_bytes(name: &Path, bytes: &[u8]) -> Result<InputFile> {
        Self::opened(name, Bytes::copied(name, bytes)?)
    }

    /// The file at `path`, whose bytes are `map`, opened as the kind its bytes say.
    fn opened(path: &Path, map: Bytes) -> Result<InputFile> {
        let kind = decide(&map);
        let opened = match kind {
            Kind::Elf => Opened::Elf(Box::default()),
            Kind::RawBtf { big_endian } => Opened::RawBtf { big_endian },
            Kind::Snapshot => Opened::Snapshot(snapshot::open(path, &map)?),
            Kind::Compressed(_) | Kind::Unknown => Opened::Refused(kind),
        };
        Ok(InputFile {
            path: path.to_path_buf(),
            map,
            opened,
            symbol_list: None,
            cached: false,
        })
    }

    /// This input read through `cache` (none: as it is): an ELF file with a build-id
    /// and no symbol list beside it becomes its snapshot, found in the cache or written
    /// to it now, and named by its own path in every output. Anything that fails on
    /// the way (a damaged entry, a full disk, a part of the file only the snapshot
    /// reads) leaves the input as it was, so the command reads the vmlinux.
    pub fn through_cache(self, cache: Option<&crate::cache::Cache>) -> InputFile {
        self.through_cache_for(cache, false)
    }

    /// `through_cache`, for a command that reads the typed access map (`typed`): an
    /// entry written without it (the map costs a diff's first run as much as the rest
    /// of the snapshot, and only `show --access` reads it) is written again with it.
    pub fn through_cache_for(self, cache: Option<&crate::cache::Cache>, typed: bool) -> InputFile {
        let Some(cache) = cache else {
            return self;
        };
        let Some(key) = self.cache_key() else {
            return self;
        };
        if let Some(found) = cache.find(&key)
            && let Ok(file) = Self::from_snapshot_bytes(&self.path, found)
            && (!typed || file.has_typed_map() || !self.is_x86_64())
        {
            return file;
        }
        let Ok(bytes) = self.snapshot_bytes(typed) else {
            return self;
        };
        // Not kept (an unwritable directory): this run still reads the snapshot, so
        // that its output is the one later runs give.
        let _ = cache.store(&key, &self.path, &bytes);
        Self::from_snapshot_bytes(&self.path, Bytes::owned(bytes)).unwrap_or(self)
    }

    /// `through_cache` on two inputs side by side.
    pub fn both_through_cache(
        (a, b): (InputFile, InputFile),
        cache: Option<&crate::cache::Cache>,
    ) -> (InputFile, InputFile) {
        rayon::join(|| a.through_cache(cache), || b.through_cache(cache))
    }

    /// The cache key of an ELF file with a build-id read from its own symbols.
    fn cache_key(&self) -> Option<crate::cache::Key> {
        if !matches!(self.opened, Opened::Elf(_)) || self.symbol_list.is_some() {
            return None;
        }
        use object::Object;
        let elf = object::File::parse(&*self.map).ok()?;
        let id = elf.build_id().ok()??;
        if id.is_empty() {
            return None;
        }
        let hex = id.iter().map(|x| format!("{x:02x}")).collect();
        crate::cache::key(&self.path, hex)
    }

    /// The kallsyms tables of an ELF build (`link::kallsyms`), read from its symbol
    /// table and section bytes: `None` for another kind of input (a snapshot keeps no
    /// names table), and why not when the build's tables are not modelled.
    pub fn kallsyms(
        &self,
    ) -> Option<
        std::result::Result<crate::link::kallsyms::Kallsyms, crate::link::kallsyms::Unmodelled>,
    > {
        use crate::link::kallsyms::{Kallsyms, LABELS, Unmodelled};
        use object::{Object, ObjectSection, ObjectSymbol};
        if !matches!(self.opened, Opened::Elf(_)) {
            return None;
        }
        let elf = object::File::parse(&*self.map).ok()?;
        let labels: Vec<(&str, u64, Option<object::SectionIndex>)> = elf
            .symbols()
            .filter_map(|s| {
                let name = s.name().ok()?;
                LABELS
                    .contains(&name)
                    .then(|| (name, s.address(), s.section_index()))
            })
            .collect();
        let Some(index) = labels.iter().find_map(|l| l.2) else {
            return Some(Err(Unmodelled::Missing));
        };
        let section = elf.section_by_index(index).ok()?;
        let (start, data) = (section.address(), section.data().ok()?);
        let bytes = |at: u64, len: usize| {
            let from = usize::try_from(at.checked_sub(start)?).ok()?;
            data.get(from..from.checked_add(len)?)
        };
        // The first object after the tables (the lowest sized symbol past their last
        // label, in their section).
        let last = labels.iter().map(|l| l.1).max().unwrap_or(0);
        let next = elf
            .symbols()
            .filter(|s| s.section_index() == Some(index) && s.size() > 0 && s.address() > last)
            .map(|s| s.address())
            .min();
        let labels: Vec<(&str, u64)> = labels.iter().map(|l| (l.0, l.1)).collect();
        Some(Kallsyms::read(
            &labels,
            &bytes,
            !elf.is_little_endian(),
            next,
        ))
    }

    /// The snapshot file of this vmlinux, stored (not compressed: a cached build is
    /// read in place from its map), without source lines (finding them for every
    /// function was a fifth of the first read; the two views that print them, `show
    /// --symbol` and `show --line`, read the vmlinux instead).
    fn snapshot_bytes(&self, typed: bool) -> Result<Vec<u8>> {
        let parts = self.for_snapshot_with(false, typed)?;
        snapshot::to_bytes(
            &parts.image,
            &parts.elf_files,
            parts.lines.as_deref(),
            snapshot::Packing::Stored,
            &self.path,
        )
    }

    /// The input at `path` read from its snapshot's `bytes`.
    fn from_snapshot_bytes(path: &Path, bytes: Bytes) -> Result<InputFile> {
        let opened = snapshot::open(path, &bytes)?;
        Ok(InputFile {
            path: path.to_path_buf(),
            map: bytes,
            opened: Opened::Snapshot(opened),
            symbol_list: None,
            cached: true,
        })
    }

    /// Whether this snapshot input holds a typed access map (true for any other input:
    /// it is read from the build itself).
    fn has_typed_map(&self) -> bool {
        match &self.opened {
            Opened::Snapshot(opened) => opened.has_typed_map(&self.map),
            _ => true,
        }
    }

    /// Whether this is an x86-64 ELF file (the typed access map reads only its code).
    fn is_x86_64(&self) -> bool {
        use object::Object;
        object::File::parse(&*self.map)
            .is_ok_and(|f| f.architecture() == object::Architecture::X86_64)
    }

    /// Whether this input is read through its snapshot from the cache.
    pub fn is_cached(&self) -> bool {
        self.cached
    }

    /// Takes addresses from a symbol list (`System.map` or `/proc/kallsyms` format).
    pub fn with_symbols(self, list: &Path) -> Result<InputFile> {
        Ok(self.with_symbol_list(SymbolList::read(list)?))
    }

    /// `with_symbols` with the list's text given (fuzzing, tests).
    pub fn with_symbol_text(self, list: &Path, text: String) -> Result<InputFile> {
        Ok(self.with_symbol_list(SymbolList::from_text(list, text)?))
    }

    fn with_symbol_list(mut self, list: SymbolList) -> InputFile {
        self.symbol_list = Some(list);
        self
    }

    /// The path it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The kind decided when the file was opened.
    pub fn kind(&self) -> Kind {
        match &self.opened {
            Opened::Elf(_) => Kind::Elf,
            Opened::RawBtf { big_endian } => Kind::RawBtf {
                big_endian: *big_endian,
            },
            Opened::Snapshot(_) => Kind::Snapshot,
            Opened::Refused(kind) => *kind,
        }
    }

    /// True when the file is a snapshot rather than a build (a vmlinux read through
    /// the cache is a build).
    pub fn is_snapshot(&self) -> bool {
        self.kind() == Kind::Snapshot && !self.cached
    }

    /// Reads the image as `options` asks, with the reader of the file's kind.
    pub fn load(&self, options: &LoadOptions) -> Result<Image<'_>> {
        let (path, symbols) = (&self.path, self.symbol_list.as_ref());
        match &self.opened {
            Opened::Elf(copies) => load::elf_image(path, &self.map, copies, symbols, options),
            Opened::RawBtf { big_endian } => {
                load::raw_btf_image(path, &self.map, RAW_BTF_ARCH, *big_endian, symbols, options)
            }
            Opened::Snapshot(opened) => snapshot::image(path, opened, &self.map, options),
            Opened::Refused(Kind::Compressed(how)) => Err(Error::Input {
                path: path.clone(),
                message: how.refusal(),
            }),
            Opened::Refused(_) => Err(Error::NotElf { path: path.clone() }),
        }
    }

    /// Source lines of code addresses: an ELF file's from its line programs (read
    /// lazily, one unit at a time; `None` without DWARF), a snapshot's when written with
    /// `--with-lines` (else `None`).
    pub fn source_lines(&self) -> Result<Option<SourceLines<'_>>> {
        match &self.opened {
            Opened::Snapshot(opened) => {
                Ok(snapshot::lines(&self.path, opened, &self.map)?.map(SourceLines::from_table))
            }
            Opened::Elf(copies) => load::source_lines(&self.path, &self.map, copies),
            Opened::RawBtf { .. } | Opened::Refused(_) => Err(Error::NotElf {
                path: self.path.clone(),
            }),
        }
    }

    /// The executable sections of an ELF file (`load::code_sections`), for the access
    /// map; other kinds of input hold no code and give none.
    pub fn code_sections(&self) -> Result<Vec<crate::model::CodeSection<'_>>> {
        match &self.opened {
            Opened::Elf(_) => load::code_sections(&self.path, &self.map),
            _ => Ok(Vec::new()),
        }
    }

    /// Walks every DIE of an ELF file (`load::walk_dies`); a snapshot has none.
    pub fn walk_dies(&self, parse: bool) -> Result<Walked> {
        match &self.opened {
            Opened::Snapshot(_) => Ok(Walked::default()),
            Opened::Elf(copies) => load::walk_dies(&self.path, &self.map, copies, parse),
            Opened::RawBtf { .. } | Opened::Refused(_) => Err(Error::NotElf {
                path: self.path.clone(),
            }),
        }
    }

    /// What a snapshot keeps of this input (a vmlinux): its image read in full, its
    /// symbols' file names as the ELF alone gives them, and with `with_lines` the
    /// source lines `show --line` prints. `snapshot::write` writes them.
    pub fn for_snapshot(&self, with_lines: bool) -> Result<ForSnapshot<'_>> {
        self.for_snapshot_with(with_lines, true)
    }

    /// `for_snapshot`, with the typed access map only when `typed` asks for it.
    fn for_snapshot_with(&self, with_lines: bool, typed: bool) -> Result<ForSnapshot<'_>> {
        let full = LoadOptions {
            all_typedefs: true,
            code: true,
            typed,
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
}

/// `file:line` at the start of every function and every `snapshot::LINE_GRANULE`
/// boundary inside it (ordinary address space only; per-CPU offsets are not code).
fn snapshot_lines(input: &InputFile, image: &Image<'_>) -> Result<Option<Vec<(u64, String)>>> {
    use crate::model::{Space, SymbolKind};
    let Some(lines) = input.source_lines()? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    let functions = image
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Function && s.space == Space::Global);
    // Lookups, at most: one per function and per granule of the file. A forged section
    // and function size (up to 2^64) would otherwise be walked 64 bytes at a time; the
    // code of a real build lies in the file, so its boundaries are all within this.
    let mut budget = (input.map.len() as u64 / snapshot::LINE_GRANULE)
        .saturating_add(image.symbols.len() as u64)
        .saturating_add(image.access.refs.len() as u64);
    for s in functions {
        let end = s.place.saturating_add(s.size);
        let mut at = s.place;
        while at < end.max(s.place.saturating_add(1)) {
            let Some(left) = budget.checked_sub(1) else {
                break;
            };
            budget = left;
            if let Some(loc) = lines.find(at) {
                out.push((at, loc));
            }
            at = (at / snapshot::LINE_GRANULE + 1).saturating_mul(snapshot::LINE_GRANULE);
        }
    }
    // The instructions of the access map: `show --symbol` prints their source lines.
    for a in &image.access.refs {
        let Some(left) = budget.checked_sub(1) else {
            break;
        };
        budget = left;
        if let Some(loc) = lines.find(a.insn) {
            out.push((a.insn, loc));
        }
    }
    out.sort();
    out.dedup_by_key(|(a, _)| *a);
    Ok(Some(out))
}
