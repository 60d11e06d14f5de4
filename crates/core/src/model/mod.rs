//! The layout model: plain data read from one vmlinux (sections, symbols, struct
//! layouts, global variables). No parsing and no printing lives here; `load` fills it
//! and `layout`, `diff` and `report` read it.

pub mod access;
mod aligned;
mod code;
mod ctype;
pub mod header;
pub mod hex;
mod symbols;
pub mod typed;
mod types;

pub use aligned::{Alignment, StoredAlignments};
pub use code::CodeSection;
pub(crate) use ctype::trim_leading;
pub use ctype::{CType, Declaration, TypeKind, TypeRef};
pub use header::Header;
pub use symbols::{Binding, Section, Space, Symbol, SymbolKind, rust_name, rust_prefixed};
pub use types::{
    AggregateKind, BitHole, Hole, Member, StructId, StructLayout, TypeGaps, Variable, saturate_u32,
};

use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

/// Linker symbols that mark sub-sections merged away in a vmlinux (name pairs: start, end).
pub const BOUNDARY_SYMBOLS: &[&str] = &[
    "__init_begin",
    "__init_end",
    "__start_ro_after_init",
    "__end_ro_after_init",
    // The per-CPU hot area of newer x86 kernels (`DEFINE_PER_CPU_CACHE_HOT`, input
    // section `.data..percpu..hot`), which replaced `pcpu_hot`.
    "__per_cpu_hot_start",
    "__per_cpu_hot_end",
    // x86's linker script puts `READ_MOSTLY_DATA` last in `.data`, right before
    // `_edata`. `.data..read_mostly` is no symbol: it is where those input sections
    // start, derived at load time (`load::elf::read_mostly_start`).
    READ_MOSTLY_START,
    "_edata",
    // Where the per-CPU area's load image starts in the ordinary address space when
    // the area is linked at 0 (`PERCPU_VADDR`): `whatif` moves the output sections
    // after it by its size.
    "__per_cpu_load",
];

/// The alignment GCC gives a function at `-O2` on x86-64 (`-falign-functions`'s
/// default for generic tuning): the link model's, unless a unit's options say
/// otherwise (`Image::function_alignments`).
pub const FUNCTION_ALIGNMENT: u64 = 16;

/// The derived boundary where x86's `__read_mostly` data starts (see `BOUNDARY_SYMBOLS`).
pub const READ_MOSTLY_START: &str = ".data..read_mostly";

/// The source of an image's types: DWARF describes every global's type; BTF (a
/// kernel stripped of DWARF) describes structs and the per-CPU variables only, so
/// other globals are placed from the symbol table with their types unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TypesFrom {
    /// From DWARF.
    Dwarf,
    /// From BTF (`/sys/kernel/btf/vmlinux`, `.BTF`).
    Btf,
    /// No types: a symbol table alone.
    None,
}

impl TypesFrom {
    /// The types came from DWARF.
    pub fn is_dwarf(&self) -> bool {
        *self == TypesFrom::Dwarf
    }
}

/// One loaded vmlinux (or object file).
#[derive(Debug, Serialize)]
pub struct Image<'d> {
    /// The file it was read from.
    pub path: PathBuf,
    /// Architecture name as `object` reports it, e.g. `x86_64`.
    pub arch: String,
    /// The target is big-endian.
    pub big_endian: bool,
    /// `exec`, `rel`, `dyn` or `other`.
    pub file_kind: &'static str,
    /// The GNU build-id (`.note.gnu.build-id`), in hex, when it has one.
    pub build_id: Option<String>,
    /// The kernel release the build says it is (`linux_banner`, or a module's
    /// `vermagic`), when it says so: `6.1.0-50-cloud-amd64 (Debian 6.1.176-1)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_version: Option<String>,
    /// Cache line size in bytes used for every line computation.
    pub line_size: u64,
    /// True when the line size came from `--line-size`, not the target.
    pub line_size_overridden: bool,
    /// It has DWARF or BTF types.
    pub has_debug_info: bool,
    /// The symbols came from a symbol list (System.map, kallsyms): their sizes are the
    /// distance to the next address, not the object's size.
    pub sizes_inferred: bool,
    /// Where struct layouts and variables' types came from.
    pub types_from: TypesFrom,
    /// Address that per-CPU offsets are counted from (`__per_cpu_start`), when the image
    /// has a `.data..percpu` section.
    #[serde(serialize_with = "crate::model::hex::opt_addr")]
    pub percpu_base: Option<u64>,
    /// Linker boundary symbols found (`__init_begin`, `__start_ro_after_init`, ...):
    /// where merged sub-sections start and end in the final image.
    pub boundaries: Vec<(&'static str, u64)>,
    /// Bytes of `__pfx_<fn>` padding before each function (16 from Linux 6.2 on x86
    /// with call padding; 0 when the image has none). The symbols themselves are noise.
    pub function_prefix: u64,
    /// Its sections, in header order.
    pub sections: Vec<Section<'d>>,
    /// Functions and data objects, sorted by (space, address, name).
    pub symbols: Vec<Symbol<'d>>,
    /// Struct and union definitions, deduplicated, sorted by (name, decl_file, size).
    /// Each is shared: a prediction of this image holds the layouts it did not change
    /// (all but a handful) by reference rather than copying every member of every one.
    pub structs: Vec<Arc<StructLayout<'d>>>,
    /// Global variables found in DWARF, sorted by (address, name).
    pub variables: Vec<Variable<'d>>,
    /// Number of compile units read.
    pub units: usize,
    /// The compile units whose functions GCC aligned other than to
    /// `FUNCTION_ALIGNMENT` (1 for a unit built `-Os`), from the options their
    /// `DW_AT_producer` records, sorted by unit: what the link model aligns their
    /// functions to (`function_alignment`).
    pub function_alignments: Vec<(&'d str, u64)>,
    /// Who reads and writes each data object, from the machine code (x86-64 builds
    /// loaded with `LoadOptions::code`); empty and unsupported otherwise.
    #[serde(skip)]
    pub access: access::AccessMap,
    /// Who touches which member of which struct type through a pointer (x86-64 with
    /// DWARF; empty otherwise).
    pub typed: typed::TypedMap,
    /// What the link model says aligned each symbol, when it came stored with the
    /// image (a snapshot keeps it): read through `stored_alignments`, which refuses it
    /// once the symbols or the line size are no longer those it was found for.
    #[serde(skip)]
    pub link_alignments: Option<StoredAlignments>,
}

impl<'d> Image<'d> {
    /// An image of `path` with nothing read into it yet, for the target `arch` with
    /// lines of `line_size` bytes: each loader (ELF, raw BTF, snapshot) starts from it
    /// and fills in what its input says.
    pub fn new(path: PathBuf, arch: String, line_size: u64) -> Image<'d> {
        Image {
            path,
            arch,
            big_endian: false,
            file_kind: "other",
            build_id: None,
            kernel_version: None,
            line_size,
            line_size_overridden: false,
            has_debug_info: false,
            sizes_inferred: false,
            types_from: TypesFrom::None,
            percpu_base: None,
            boundaries: Vec::new(),
            function_prefix: 0,
            sections: Vec::new(),
            symbols: Vec::new(),
            structs: Vec::new(),
            variables: Vec::new(),
            units: 0,
            function_alignments: Vec::new(),
            access: access::AccessMap::default(),
            typed: typed::TypedMap::default(),
            link_alignments: None,
        }
    }

    /// Struct layouts whose name matches `pred`, in model order.
    pub fn structs_named<'a>(
        &'a self,
        mut pred: impl FnMut(&str) -> bool + 'a,
    ) -> impl Iterator<Item = (StructId, &'a StructLayout<'d>)> + 'a {
        self.structs
            .iter()
            .enumerate()
            .filter(move |(_, s)| pred(s.name))
            .map(|(i, s)| (StructId(i), &**s))
    }

    /// The struct `id` names.
    pub fn struct_by_id(&self, id: StructId) -> &StructLayout<'d> {
        &self.structs[id.0]
    }

    /// The alignment GCC gives the functions of compile unit `unit` (see
    /// `function_alignments`).
    pub fn function_alignment(&self, unit: Option<&str>) -> u64 {
        unit.and_then(|u| {
            self.function_alignments
                .binary_search_by(|(n, _)| (*n).cmp(u))
                .ok()
                .map(|i| self.function_alignments[i].1)
        })
        .unwrap_or(FUNCTION_ALIGNMENT)
    }

    /// What the source asked for: `DW_AT_alignment` on the variable, else on the struct
    /// its type resolves to.
    pub fn explicit_alignment(&self, v: &Variable<'d>) -> Option<u64> {
        v.alignment.or(v
            .layout
            .and_then(|id| self.struct_by_id(id).explicit_alignment))
    }

    /// The name of the struct a variable's type resolves to, when it has one.
    pub fn struct_name(&self, v: &Variable<'d>) -> Option<&'d str> {
        v.layout
            .map(|id| self.struct_by_id(id).name)
            .filter(|n| !n.is_empty())
    }

    /// Whether `sym` lies in the per-CPU hot area (`__per_cpu_hot_start` ..
    /// `__per_cpu_hot_end`, when the build has one).
    pub fn in_percpu_hot_area(&self, sym: &Symbol<'d>) -> bool {
        let at = |n: &str| self.boundaries.iter().find(|b| b.0 == n).map(|b| b.1);
        match (at("__per_cpu_hot_start"), at("__per_cpu_hot_end")) {
            (Some(start), Some(end)) => {
                sym.space == Space::Percpu && (start..end).contains(&sym.address)
            }
            _ => false,
        }
    }

    /// Whether `sym` is `__read_mostly` data: x86's `.data..read_mostly` input sections,
    /// merged at the end of `.data` (from the derived start up to `_edata`).
    pub fn in_read_mostly(&self, sym: &Symbol<'d>) -> bool {
        let at = |n: &str| self.boundaries.iter().find(|b| b.0 == n).map(|b| b.1);
        match (at(READ_MOSTLY_START), at("_edata")) {
            (Some(start), Some(end)) => {
                sym.space == Space::Global && (start..end).contains(&sym.address)
            }
            _ => false,
        }
    }

    /// The index in `symbols` of `sym` when it is one of them (by reference, not by
    /// value: for the indexes built over `symbols`).
    pub fn index_of(&self, sym: &Symbol<'d>) -> Option<usize> {
        let all = self.symbols.as_ptr_range();
        let at = sym as *const Symbol<'d>;
        all.contains(&at)
            .then(|| (at as usize - all.start as usize) / std::mem::size_of::<Symbol<'d>>().max(1))
    }

    /// The DWARF variable that describes a symbol, matched by name and address.
    pub fn variable_for(&self, sym: &Symbol<'d>) -> Option<&Variable<'d>> {
        let start = self.variables.partition_point(|v| v.address < sym.address);
        self.variable_from(start, sym)
    }

    /// `variable_for` answered from a vector of the variables' addresses, for callers
    /// that ask for every symbol (the search touches addresses, not whole variables).
    pub fn variables_by_address(&self) -> VariableIndex<'_, 'd> {
        VariableIndex {
            image: self,
            addresses: self.variables.iter().map(|v| v.address).collect(),
        }
    }

    /// `variable_for` from the first variable at or after the symbol's address.
    /// `variable_for` of every symbol, found in one pass: symbols are in (space, place)
    /// order, so their addresses rise within each space and the variables (in address
    /// order) are walked alongside instead of searched for each symbol.
    pub fn variables_of_symbols(&self) -> SymbolVariables<'_, 'd> {
        let mut slots = Vec::with_capacity(self.symbols.len());
        let (mut start, mut last) = (0, 0);
        for sym in &self.symbols {
            if sym.address < last {
                start = self.variables.partition_point(|v| v.address < sym.address);
            }
            while self
                .variables
                .get(start)
                .is_some_and(|v| v.address < sym.address)
            {
                start += 1;
            }
            last = sym.address;
            let found = self.variable_from(start, sym);
            let size = std::mem::size_of::<Variable<'d>>().max(1);
            slots.push(found.map_or(u32::MAX, |v| {
                ((v as *const Variable<'d> as usize - self.variables.as_ptr() as usize) / size)
                    as u32
            }));
        }
        SymbolVariables { image: self, slots }
    }

    fn variable_from(&self, start: usize, sym: &Symbol<'d>) -> Option<&Variable<'d>> {
        self.variables[start..]
            .iter()
            .take_while(|v| v.address == sym.address)
            .find(|v| {
                v.name == sym.name
                    || sym
                        .name
                        .strip_prefix(v.name)
                        .is_some_and(|rest| rest.starts_with('.'))
            })
    }

    /// An image with nothing in it, for unit tests.
    #[cfg(test)]
    pub(crate) fn test_empty() -> Image<'static> {
        Image {
            file_kind: "exec",
            has_debug_info: true,
            types_from: TypesFrom::Dwarf,
            ..Image::new(PathBuf::from("test"), "x86_64".into(), 64)
        }
    }

    /// The link model's alignments stored with the image (`link_alignments`), when
    /// they still describe its symbols: one per symbol, found at its line size.
    pub fn stored_alignments(&self) -> Option<&[Option<Alignment>]> {
        self.link_alignments
            .as_ref()
            .filter(|a| a.line_size == self.line_size && a.by_symbol.len() == self.symbols.len())
            .map(|a| a.by_symbol.as_slice())
    }

    /// Count of symbols of one kind in one space.
    pub fn count(&self, kind: SymbolKind, space: Space) -> usize {
        self.symbols
            .iter()
            .filter(|s| s.kind == kind && s.space == space)
            .count()
    }
}

/// The variable of each symbol of an image (`Image::variables_of_symbols`).
#[derive(Clone)]
pub struct SymbolVariables<'a, 'd> {
    image: &'a Image<'d>,
    /// Index of the variable of each symbol, `u32::MAX` for none.
    slots: Vec<u32>,
}

impl<'a, 'd> SymbolVariables<'a, 'd> {
    /// `Image::variable_for(sym)`, for a symbol of this image (any other is searched).
    pub fn of(&self, sym: &Symbol<'d>) -> Option<&'a Variable<'d>> {
        let Some(i) = self.image.index_of(sym) else {
            return self.image.variable_for(sym);
        };
        self.slot(i).and_then(|v| self.image.variables.get(v))
    }

    /// The index in the image's `variables` of the variable of its symbol number `i`.
    pub fn slot(&self, i: usize) -> Option<usize> {
        match self.slots.get(i) {
            None | Some(&u32::MAX) => None,
            Some(&v) => Some(v as usize),
        }
    }
}

/// An image's variables searchable by address (see `Image::variables_by_address`).
pub struct VariableIndex<'a, 'd> {
    image: &'a Image<'d>,
    addresses: Vec<u64>,
}

impl<'a, 'd> VariableIndex<'a, 'd> {
    /// Same answer as `Image::variable_for`.
    pub fn of(&self, sym: &Symbol<'d>) -> Option<&'a Variable<'d>> {
        let start = self.addresses.partition_point(|&a| a < sym.address);
        self.image.variable_from(start, sym)
    }
}

#[cfg(test)]
mod tests {
    use crate::input::InputFile;
    use crate::load::LoadOptions;

    /// Objects between `__per_cpu_hot_start` and `__per_cpu_hot_end` (per-CPU only)
    /// are in the hot area; without the two symbols nothing is.
    #[test]
    fn the_per_cpu_hot_area_is_read_from_its_boundary_symbols() {
        let mut image = super::Image::test_empty();
        let mut hot = super::Symbol::test_object("current_task", 0x20, 8);
        hot.space = super::Space::Percpu;
        let mut after = hot.clone();
        after.address = 0x40;
        let global = super::Symbol::test_object("g", 0x20, 8);
        assert!(!image.in_percpu_hot_area(&hot));
        image.boundaries = vec![("__per_cpu_hot_start", 0x0), ("__per_cpu_hot_end", 0x40)];
        assert!(image.in_percpu_hot_area(&hot));
        assert!(!image.in_percpu_hot_area(&after));
        assert!(!image.in_percpu_hot_area(&global));
    }

    /// `__read_mostly` data lies from the derived start up to `_edata`, globals only.
    #[test]
    fn read_mostly_data_ends_at_edata() {
        let mut image = super::Image::test_empty();
        let inside = super::Symbol::test_object("system_state", 0x1000, 4);
        let mut percpu = inside.clone();
        percpu.space = super::Space::Percpu;
        let at_end = super::Symbol::test_object("__bug", 0x1040, 4);
        let before = super::Symbol::test_object("___tp_str", 0xff8, 8);
        assert!(!image.in_read_mostly(&inside));
        image.boundaries = vec![(super::READ_MOSTLY_START, 0x1000), ("_edata", 0x1040)];
        assert!(image.in_read_mostly(&inside));
        assert!(!image.in_read_mostly(&percpu));
        assert!(!image.in_read_mostly(&at_end));
        assert!(!image.in_read_mostly(&before));
    }

    /// The one-pass lookup agrees with the search for every symbol of the fixtures
    /// (globals and per-CPU variables, aliases, functions without variables).
    #[test]
    fn variables_of_symbols_agree_with_variable_for() {
        let root = testdata!();
        for f in ["old.elf", "new.elf", "old-clang.elf"] {
            let file = InputFile::open(&root.join(f)).unwrap();
            let image = file.load(&LoadOptions::default()).unwrap();
            let all = image.variables_of_symbols();
            let mut found = 0;
            for s in &image.symbols {
                let (a, b) = (all.of(s), image.variable_for(s));
                assert_eq!(
                    a.map(|v| v as *const _),
                    b.map(|v| v as *const _),
                    "{f}: {}",
                    s.name
                );
                found += usize::from(a.is_some());
            }
            assert!(found > 10, "{f}: {found} symbols with a variable");
        }
    }
}
