//! The ELF side of loading: file kind and target, sections, the symbols that matter
//! for layout, the per-CPU base, and the raw DWARF sections (decompressed, and
//! relocated for `ET_REL` objects only; a linked vmlinux already holds final values).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use object::elf;
use object::read::elf::{ElfFile, FileHeader, SectionHeader as _};
use object::{
    Object, ObjectKind, ObjectSection, ObjectSymbol, SectionIndex, SymbolKind as ObjKind,
    SymbolSection,
};
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::kernel::is_function_padding;
use crate::model::{Binding, Section, Space, Symbol, SymbolKind};

/// Name of the output section that holds per-CPU variables.
pub const PERCPU_SECTION: &str = ".data..percpu";

/// The DWARF sections gimli reads, by name, borrowed from the map or from the file's owned copies.
pub(crate) struct DebugSections<'d> {
    pub little_endian: bool,
    pub sections: HashMap<&'static str, &'d [u8]>,
}

impl<'d> DebugSections<'d> {
    /// The sections as gimli's `Dwarf`, in the file's byte order: the one loader every
    /// DWARF reader (types, the DIE walk, source lines) starts from.
    pub fn dwarf(&self, path: &Path) -> Result<super::dies::Dwarf<'d>> {
        let endian = if self.little_endian {
            gimli::RunTimeEndian::Little
        } else {
            gimli::RunTimeEndian::Big
        };
        gimli::Dwarf::load(|id| -> std::result::Result<_, ()> {
            let data = self.sections.get(id.name()).copied().unwrap_or(&[]);
            Ok(gimli::EndianSlice::new(data, endian))
        })
        .map_err(|_| Error::Input {
            path: path.to_path_buf(),
            message: "cannot load DWARF sections".into(),
        })
    }
}

pub(crate) struct ElfInfo<'d> {
    pub arch: String,
    pub big_endian: bool,
    pub file_kind: &'static str,
    pub build_id: Option<String>,
    /// `kernel_version::of_banner` of `linux_banner`, or a module's `vermagic`.
    pub kernel_version: Option<String>,
    pub percpu_base: Option<u64>,
    /// Size of the `__pfx_<fn>` padding symbols placed before functions (0: none).
    pub function_prefix: u64,
    /// Linker boundary symbols present (see `model::BOUNDARY_SYMBOLS`), by name.
    pub boundaries: Vec<(&'static str, u64)>,
    pub sections: Vec<Section<'d>>,
    pub symbols: Vec<Symbol<'d>>,
    pub debug: Option<DebugSections<'d>>,
    /// The `.BTF` section's bytes, when present (read when there is no DWARF).
    pub btf: Option<&'d [u8]>,
    /// Address of `.data..percpu` (BTF's per-CPU DATASEC offsets count from it).
    pub percpu_address: Option<u64>,
}

/// The DWARF sections read. For layouts, line programs are read only for their
/// headers (file names); location lists and relocation sections are never read.
pub(crate) const DWARF_SECTIONS: [&str; 12] = [
    ".debug_info",
    ".debug_abbrev",
    ".debug_str",
    ".debug_line_str",
    ".debug_str_offsets",
    ".debug_addr",
    ".debug_line",
    // Only for source lines of code addresses (`show --line`), through addr2line.
    ".debug_aranges",
    ".debug_rnglists",
    ".debug_ranges",
    // Where parameters and locals live, for the typed access map.
    ".debug_loclists",
    ".debug_loc",
];

/// Cache line size of the target when the user gives none.
pub(crate) fn default_line_size(arch: &str) -> u64 {
    match arch {
        "s390x" => 256,
        "powerpc64" | "powerpc" => 128,
        _ => 64,
    }
}

pub(crate) fn read<'d>(
    path: &Path,
    data: &'d [u8],
    owned: &'d [OnceLock<Vec<u8>>],
) -> Result<ElfInfo<'d>> {
    read_parts(path, data, owned, true)
}

/// The DWARF sections alone (source lines need nothing else): the symbol table and
/// section list are not read.
pub(crate) fn read_dwarf<'d>(
    path: &Path,
    data: &'d [u8],
    owned: &'d [OnceLock<Vec<u8>>],
) -> Result<Option<DebugSections<'d>>> {
    Ok(read_parts(path, data, owned, false)?.debug)
}

/// `read`, leaving sections, symbols and boundaries empty unless `layout`.
fn read_parts<'d>(
    path: &Path,
    data: &'d [u8],
    owned: &'d [OnceLock<Vec<u8>>],
    layout: bool,
) -> Result<ElfInfo<'d>> {
    if !data.starts_with(b"\x7fELF") {
        return Err(Error::NotElf {
            path: path.to_path_buf(),
        });
    }
    let malformed = |e: object::Error| Error::Elf {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    match object::FileKind::parse(data).map_err(malformed)? {
        object::FileKind::Elf64 => {
            if data.get(5) == Some(&2) {
                read_elf::<elf::FileHeader64<object::BigEndian>, _>(path, data, owned, layout)
            } else {
                read_elf::<elf::FileHeader64<object::LittleEndian>, _>(path, data, owned, layout)
            }
        }
        object::FileKind::Elf32 => {
            if data.get(5) == Some(&2) {
                read_elf::<elf::FileHeader32<object::BigEndian>, _>(path, data, owned, layout)
            } else {
                read_elf::<elf::FileHeader32<object::LittleEndian>, _>(path, data, owned, layout)
            }
        }
        _ => Err(Error::NotElf {
            path: path.to_path_buf(),
        }),
    }
}

/// How a file cut short (an interrupted download or copy) ends before its own headers
/// say it does: its section header table, or the bytes of a section, past its end.
/// `None` when everything fits (other damage is left to the parser).
fn truncation<H: FileHeader>(data: &[u8]) -> Option<String> {
    let header = H::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let len = data.len() as u64;
    let table = header.e_shoff(endian).into();
    let entries =
        u64::from(header.e_shnum(endian)).checked_mul(u64::from(header.e_shentsize(endian)))?;
    let table_end = table.checked_add(entries)?;
    if table_end > len {
        return Some(format!(
            "truncated: the file has {len} bytes, its section headers end at byte {table_end}"
        ));
    }
    let sections = header.sections(endian, data).ok()?;
    let names = |s: &H::SectionHeader| {
        sections
            .section_name(endian, s)
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default()
    };
    sections
        .iter()
        .filter(|s| s.sh_type(endian) != elf::SHT_NOBITS)
        .filter_map(|s| {
            let end = s
                .sh_offset(endian)
                .into()
                .checked_add(s.sh_size(endian).into())?;
            (end > len).then_some((end, s))
        })
        .max_by_key(|(end, _)| *end)
        .map(|(end, s)| {
            format!(
                "truncated: the file has {len} bytes, section {} ends at byte {end}",
                names(s)
            )
        })
}

fn read_elf<'d, H: FileHeader<Endian = E>, E: object::Endian>(
    path: &Path,
    data: &'d [u8],
    owned: &'d [OnceLock<Vec<u8>>],
    layout: bool,
) -> Result<ElfInfo<'d>> {
    if let Some(message) = truncation::<H>(data) {
        return Err(Error::Input {
            path: path.to_path_buf(),
            message,
        });
    }
    let file = ElfFile::<H>::parse(data).map_err(|e| Error::Elf {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let arch = format!("{:?}", file.architecture()).to_lowercase();
    let file_kind = file_kind_name(file.kind());
    let build_id = file
        .build_id()
        .ok()
        .flatten()
        .map(|b| b.iter().map(|x| format!("{x:02x}")).collect());
    let table = if layout {
        SectionTable::of(&file)
    } else {
        SectionTable::default()
    };
    // The boundary symbols and `__per_cpu_start`, found in one pass over the symbol
    // table (`symbol_by_name` is a pass each: eleven were 8% of `show --symbol`).
    let wanted: Vec<&'static str> = ["__per_cpu_start", BANNER]
        .into_iter()
        .chain(crate::model::BOUNDARY_SYMBOLS.iter().copied())
        .collect();
    let named = if layout || table.percpu_index.is_some() {
        first_addresses(&file, &wanted)
    } else {
        HashMap::new()
    };
    let percpu_base = table.percpu_index.map(|_| {
        named
            .get("__per_cpu_start")
            .copied()
            .unwrap_or(table.percpu_address.unwrap_or(0))
    });
    let (symbols, function_prefix) = if !layout {
        (Vec::new(), 0)
    } else {
        read_symbols(&file, &table, percpu_base.unwrap_or(0))
    };
    let boundaries = if layout {
        boundaries_of(&file, &arch, &named)
    } else {
        Vec::new()
    };
    let debug = read_debug(path, &file, owned)?;
    let btf = file
        .section_by_name(".BTF")
        .and_then(|s| s.data().ok())
        .filter(|d| !d.is_empty());
    Ok(ElfInfo {
        btf,
        percpu_address: table.percpu_address,
        function_prefix,
        boundaries,
        arch,
        big_endian: !file.is_little_endian(),
        file_kind,
        build_id,
        kernel_version: kernel_version_of(&file, &named),
        percpu_base,
        sections: table.sections,
        symbols,
        debug,
    })
}

/// An object kind as the model spells it.
fn file_kind_name(kind: ObjectKind) -> &'static str {
    match kind {
        ObjectKind::Executable => "exec",
        ObjectKind::Relocatable => "rel",
        ObjectKind::Dynamic => "dyn",
        _ => "other",
    }
}

/// The sections of a file as a layout needs them.
#[derive(Default)]
struct SectionTable<'d> {
    /// The named sections, in file order.
    sections: Vec<Section<'d>>,
    /// Each section's name and end address, by index.
    names: HashMap<SectionIndex, (&'d str, u64)>,
    /// The executable sections.
    executable: HashSet<SectionIndex>,
    /// `.data..percpu`: its index and address.
    percpu_index: Option<SectionIndex>,
    percpu_address: Option<u64>,
}

impl<'d> SectionTable<'d> {
    fn of<H: FileHeader>(file: &ElfFile<'d, H>) -> Self {
        let mut t = SectionTable::default();
        for s in file.sections() {
            let name = s.name().unwrap_or("");
            t.names
                .insert(s.index(), (name, s.address().saturating_add(s.size())));
            if s.kind() == object::SectionKind::Text {
                t.executable.insert(s.index());
            }
            if name == PERCPU_SECTION {
                t.percpu_index = Some(s.index());
                t.percpu_address = Some(s.address());
            }
            if name.is_empty() {
                continue;
            }
            t.sections.push(Section {
                name,
                address: s.address(),
                size: s.size(),
                alignment: s.align(),
                compressed: s
                    .compressed_file_range()
                    .is_ok_and(|r| r.format != object::CompressionFormat::None),
            });
        }
        t
    }
}

/// The boundary symbols the file has (`named`: first addresses by name), and on x86
/// where `.data..read_mostly` starts.
fn boundaries_of<H: FileHeader>(
    file: &ElfFile<'_, H>,
    arch: &str,
    named: &HashMap<&str, u64>,
) -> Vec<(&'static str, u64)> {
    let mut boundaries: Vec<(&'static str, u64)> = crate::model::BOUNDARY_SYMBOLS
        .iter()
        .filter_map(|&n| named.get(n).map(|&a| (n, a)))
        .collect();
    if arch.starts_with("x86")
        && let Some(start) = read_mostly_start(file, &boundaries)
    {
        boundaries.push((crate::model::READ_MOSTLY_START, start));
    }
    boundaries
}

/// The kernel release: from the banner's string, else from `.modinfo`'s vermagic.
fn kernel_version_of<H: FileHeader>(
    file: &ElfFile<'_, H>,
    named: &HashMap<&str, u64>,
) -> Option<String> {
    named
        .get(BANNER)
        .and_then(|&a| string_at(file, a))
        .and_then(super::kernel_version::of_banner)
        .or_else(|| {
            let modinfo = file.section_by_name(".modinfo")?.data().ok()?;
            super::kernel_version::of_modinfo(modinfo)
        })
}

/// The symbol whose string names the kernel release (`init/version.c`).
const BANNER: &str = "linux_banner";

/// The NUL-terminated string at `address` in the section that holds it (at most 512
/// bytes; none when it is not text or has no end).
fn string_at<'d, H: FileHeader>(file: &ElfFile<'d, H>, address: u64) -> Option<&'d str> {
    let section = file
        .sections()
        .find(|s| s.address() <= address && address < s.address().saturating_add(s.size()))?;
    let data = section.data().ok()?;
    let start = usize::try_from(address - section.address()).ok()?;
    let rest = data.get(start..)?;
    let rest = &rest[..rest.len().min(512)];
    let end = rest.iter().position(|&b| b == 0)?;
    std::str::from_utf8(&rest[..end]).ok()
}

/// True for names that are never layout-relevant symbols: no name, or a noise prefix
/// of the kernel's tables (local labels, the padding and type hashes placed before
/// functions).
fn is_noise(name: &str) -> bool {
    name.is_empty() || crate::kernel::noise(name).is_some()
}

/// Where x86's `__read_mostly` data starts. `arch/x86/kernel/vmlinux.lds.S` ends `.data`
/// with `READ_MOSTLY_DATA`, after `DATA_DATA`, whose last input sections are each
/// bounded by linker-script symbols (`__stop___tracepoint_str` on 6.1,
/// `__relocate_kernel_end` on 7.x). So the read-mostly input sections are what lies
/// after the last global, untyped, unsized symbol in `.data` before `_edata`. One at
/// the start of `.data` (`_sdata`) bounds nothing: then there is none to find.
/// The address of the first symbol of each of `names`, in symbol table order (what
/// `symbol_by_name` answers), from one pass over the table.
fn first_addresses<H: FileHeader>(
    file: &ElfFile<'_, H>,
    names: &[&'static str],
) -> HashMap<&'static str, u64> {
    let mut found: HashMap<&'static str, u64> = HashMap::new();
    for s in file.symbols() {
        if found.len() == names.len() {
            break;
        }
        let Ok(name) = s.name_bytes() else { continue };
        if let Some(&n) = names.iter().find(|n| n.as_bytes() == name) {
            found.entry(n).or_insert(s.address());
        }
    }
    found
}

fn read_mostly_start<H: FileHeader>(
    file: &ElfFile<'_, H>,
    boundaries: &[(&'static str, u64)],
) -> Option<u64> {
    let edata = boundaries.iter().find(|b| b.0 == "_edata")?.1;
    let data = file.section_by_name(".data")?;
    let lo = data.address();
    file.symbols()
        .filter(|s| {
            s.is_global()
                && s.kind() == ObjKind::Unknown
                && s.size() == 0
                && s.address() > lo
                && s.address() < edata
        })
        .map(|s| s.address())
        .max()
}

/// The symbols of the symbol table a layout keeps, in (space, place, name, file)
/// order, and the size of the `__pfx_` padding before functions (0 when none).
fn read_symbols<'d, H: FileHeader>(
    file: &ElfFile<'d, H>,
    table: &SectionTable<'d>,
    percpu_base: u64,
) -> (Vec<Symbol<'d>>, u64) {
    let mut out = Vec::new();
    let mut prefix = 0;
    let mut current_file: Option<&'d str> = None;
    let mut group = 0u32;
    for sym in file.symbols() {
        if sym.kind() == ObjKind::File {
            current_file = sym.name().ok().filter(|n| !n.is_empty());
            group = group.saturating_add(1);
            continue;
        }
        let Some(kind) = symbol_kind(&sym, &table.executable) else {
            continue;
        };
        let SymbolSection::Section(index) = sym.section() else {
            continue;
        };
        let Ok(name) = sym.name() else { continue };
        if is_noise(name) {
            if prefix == 0 && is_function_padding(name) {
                prefix = sym.size();
            }
            continue;
        }
        let binding = if sym.is_weak() {
            Binding::Weak
        } else if sym.is_global() {
            Binding::Global
        } else {
            Binding::Local
        };
        let percpu = Some(index) == table.percpu_index;
        let address = sym.address();
        // A per-CPU offset is the address less the area's start; a symbol before that
        // start (a forged file) has none and is left out rather than wrapped.
        let place = if percpu {
            let Some(offset) = address.checked_sub(percpu_base) else {
                continue;
            };
            offset
        } else {
            address
        };
        let (section, end) = table.names.get(&index).copied().unwrap_or(("", u64::MAX));
        let local = binding == Binding::Local;
        out.push(Symbol {
            name,
            file: if local { current_file } else { None },
            unit: None,
            compile_unit: None,
            group: if local { group } else { 0 },
            kind,
            binding,
            section,
            address,
            // Bounded by the section: a size running past its end (a wrong `.size` in
            // assembly, a corrupt file) would put the object on every line after it.
            size: sym.size().min(end.saturating_sub(address)),
            space: if percpu { Space::Percpu } else { Space::Global },
            place,
        });
    }
    out.sort_by(|a, b| (a.space, a.place, a.name, a.file).cmp(&(b.space, b.place, b.name, b.file)));
    out.dedup_by(|a, b| {
        a.space == b.space && a.place == b.place && a.name == b.name && a.file == b.file
    });
    (out, prefix)
}

/// What a symbol table entry is for layout, or `None` when it is not kept.
fn symbol_kind<'d, H: FileHeader>(
    sym: &object::read::elf::ElfSymbol<'d, '_, H>,
    executable: &HashSet<SectionIndex>,
) -> Option<SymbolKind> {
    Some(match sym.kind() {
        ObjKind::Text => SymbolKind::Function,
        ObjKind::Data => SymbolKind::Object,
        ObjKind::Tls => SymbolKind::Tls,
        // Assembly entry code (`entry_SYSCALL_64`, `asm_exc_page_fault`) is sized
        // `STT_NOTYPE` in an executable section: a function for layout.
        ObjKind::Unknown
            if sym.size() > 0
                && matches!(sym.section(), SymbolSection::Section(i) if executable.contains(&i)) =>
        {
            SymbolKind::Function
        }
        _ => return None,
    })
}

fn read_debug<'d, H: FileHeader>(
    path: &Path,
    file: &ElfFile<'d, H>,
    owned: &'d [OnceLock<Vec<u8>>],
) -> Result<Option<DebugSections<'d>>> {
    if file.section_by_name(".debug_info").is_none() {
        return Ok(None);
    }
    let relocatable = file.kind() == ObjectKind::Relocatable;
    let mut sections = HashMap::new();
    for (i, &name) in DWARF_SECTIONS.iter().enumerate() {
        let Some(section) = file.section_by_name(name) else {
            continue;
        };
        // Decompressed or relocated by an earlier read of this file (the layouts,
        // then the source lines): the work is done once per input.
        if let Some(done) = owned[i].get() {
            sections.insert(name, done.as_slice());
            continue;
        }
        let err = |message: String| Error::Section {
            path: path.to_path_buf(),
            section: name.to_string(),
            message,
        };
        let data = section
            .uncompressed_data()
            .map_err(|e| err(format!("cannot read or decompress: {e}")))?;
        let bytes: &'d [u8] = if relocatable {
            let mut copy = data.into_owned();
            relocate(file, &section, &mut copy).map_err(|e| err(e.to_string()))?;
            owned[i].get_or_init(move || copy)
        } else {
            match data {
                std::borrow::Cow::Borrowed(b) => b,
                std::borrow::Cow::Owned(v) => owned[i].get_or_init(move || v),
            }
        };
        sections.insert(name, bytes);
    }
    Ok(Some(DebugSections {
        little_endian: file.is_little_endian(),
        sections,
    }))
}

/// Why a debug section's relocations cannot be applied.
#[derive(Debug, thiserror::Error)]
enum RelocationError {
    /// The relocation section does not read.
    #[error("{0}")]
    Map(object::Error),
    /// An offset past what this machine addresses.
    #[error("{0}")]
    Offset(std::num::TryFromIntError),
    /// A relocation whose bytes are not all in the section.
    #[error("relocation at {0:#x} is outside the section")]
    Outside(u64),
}

/// Applies a relocatable object's relocations to a copy of one debug section.
fn relocate<'d, H: FileHeader>(
    file: &ElfFile<'d, H>,
    section: &object::read::elf::ElfSection<'d, '_, H>,
    bytes: &mut [u8],
) -> std::result::Result<(), RelocationError> {
    let map = section.relocation_map().map_err(RelocationError::Map)?;
    let little = file.is_little_endian();
    for (offset, rel) in section.relocations() {
        let width = match rel.size() {
            32 => 4,
            64 => 8,
            _ => continue,
        };
        let start = usize::try_from(offset).map_err(RelocationError::Offset)?;
        let Some(slot) = start
            .checked_add(width)
            .and_then(|end| bytes.get_mut(start..end))
        else {
            return Err(RelocationError::Outside(offset));
        };
        let mut raw = [0u8; 8];
        let value = if little {
            raw[..width].copy_from_slice(slot);
            u64::from_le_bytes(raw)
        } else {
            raw[8 - width..].copy_from_slice(slot);
            u64::from_be_bytes(raw)
        };
        let value = map.relocate(offset, value);
        if little {
            slot.copy_from_slice(&value.to_le_bytes()[..width]);
        } else {
            slot.copy_from_slice(&value.to_be_bytes()[8 - width..]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `old-zlib.elf` with the zlib stream of `.debug_info` overwritten: decompressing
    /// it fails, so only a read that reuses an earlier result succeeds.
    fn broken_zlib() -> Option<Vec<u8>> {
        let path = crate::fixtures::testdata()?.join("old-zlib.elf");
        let mut bytes = std::fs::read(path).unwrap();
        let file = ElfFile::<elf::FileHeader64<object::LittleEndian>>::parse(&bytes[..]).unwrap();
        let (start, size) = file
            .section_by_name(".debug_info")
            .unwrap()
            .file_range()
            .unwrap();
        // Past the 24-byte compression header, into the deflate stream.
        let (start, size) = (start as usize + 24, size as usize - 24);
        bytes[start..start + size].fill(0xff);
        Some(bytes)
    }

    #[test]
    fn a_section_decompressed_once_is_not_decompressed_again() {
        let Some(bytes) = broken_zlib() else { return };
        let path = Path::new("old-zlib.elf");
        let fresh: [OnceLock<Vec<u8>>; DWARF_SECTIONS.len()] = Default::default();
        match read(path, &bytes, &fresh) {
            Err(Error::Section { section, .. }) => assert_eq!(section, ".debug_info"),
            _ => panic!("a broken zlib stream must fail on a first read"),
        }
        let done: [OnceLock<Vec<u8>>; DWARF_SECTIONS.len()] = Default::default();
        done[0].set(vec![7, 7, 7]).unwrap();
        let info = read(path, &bytes, &done).unwrap();
        assert_eq!(
            info.debug.unwrap().sections[".debug_info"],
            &[7u8, 7, 7][..]
        );
    }

    /// A symbol whose size runs past the end of its section (here `root_user` given
    /// 2^60 bytes) is bounded by that end; the others keep theirs.
    #[test]
    fn a_size_past_the_section_end_is_bounded_by_it() {
        let path = testdata!().join("old.elf");
        let mut bytes = std::fs::read(path).unwrap();
        let file = ElfFile::<elf::FileHeader64<object::LittleEndian>>::parse(&bytes[..]).unwrap();
        let data = file.section_by_name(".data").unwrap();
        let data_end = data.address() + data.size();
        let symtab = file.section_by_name(".symtab").unwrap();
        let (symtab_at, _) = symtab.file_range().unwrap();
        let root = file.symbol_by_name("root_user").unwrap();
        // `st_size` is the last 8 bytes of a 24-byte `Elf64_Sym`.
        let at = symtab_at as usize + root.index().0 * 24 + 16;
        assert_eq!(bytes[at..at + 8], 0x88u64.to_le_bytes());
        bytes[at..at + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
        let none: [OnceLock<Vec<u8>>; DWARF_SECTIONS.len()] = Default::default();
        let info = read(Path::new("old.elf"), &bytes, &none).unwrap();
        let size = |name: &str| info.symbols.iter().find(|s| s.name == name).unwrap().size;
        assert_eq!(0xffff_ffff_82a5_1260 + size("root_user"), data_end);
        assert_eq!(size("init_user_ns"), 0x80);
        assert_eq!(size("types__ptrace"), 0x20);
    }
}
