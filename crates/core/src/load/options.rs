//! What to read of an input: the options every loader (ELF and DWARF, BTF,
//! snapshots) takes, so that a query loads only what it needs.

use globset::GlobSet;

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
    /// Those of exactly these names (`show --struct NAME`): found without reading
    /// every unit whole, together with the `typedefs` of these names.
    Named(Vec<String>),
}

impl StructFilter {
    pub(crate) fn accepts(&self, name: &str) -> bool {
        match self {
            StructFilter::All => true,
            StructFilter::None => false,
            StructFilter::Matching(set) => set.is_match(name),
            StructFilter::Named(names) => names.iter().any(|n| n == name),
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
    /// Which structs and typedefs to build layouts of.
    pub structs: StructFilter,
    /// Read global variables (and the structs they are instances of).
    pub variables: bool,
    /// With `variables`: when not empty, the plain names of the symbols `show --symbol`
    /// prints. Only the variables their view needs are read (`load::around`), unless
    /// structs or typedefs are asked for too.
    pub variables_for: Vec<String>,
    /// Typedef names to follow to the anonymous struct/union they name (`atomic_t`),
    /// as `pahole -C` does; their layouts carry the typedef's name.
    pub typedefs: Vec<String>,
    /// Every typedef that names an anonymous struct/union, as `typedefs` would (what a
    /// snapshot keeps, so `show --struct atomic_t` works on it).
    pub all_typedefs: bool,
    /// Build what pahole's text needs (spellings, members' struct padding, packed
    /// structs); `show --struct`/`--symbol` want it, a diff does not.
    pub pahole_text: bool,
    /// Read the machine code's data references (the access map, `crate::access`):
    /// the diff and `show` judge sharing by them; a struct query needs none.
    pub code: bool,
    /// Read the typed access map (`crate::typed`): members reached through pointers,
    /// with their readers and writers. `show --access` and snapshots want it.
    pub typed: bool,
    /// Read Rust units' types and variables too (`--lang all`); by default only C and
    /// assembly units are read, as `pahole --lang_exclude rust`.
    pub rust: bool,
}

impl LoadOptions {
    /// The one rule for which layouts a load lists, whoever reads them (DWARF, BTF, a
    /// snapshot): a struct or union by its own `name` when the struct filter accepts
    /// it; an anonymous one that a typedef names (`typedef`, `name` the typedef's) when
    /// that typedef is asked for by name (`typedefs`, as `pahole -C atomic_t`) or every
    /// such typedef is (`all_typedefs`, what a snapshot keeps).
    pub fn lists(&self, name: &str, typedef: bool) -> bool {
        if typedef {
            self.all_typedefs || self.typedefs.iter().any(|t| t == name)
        } else {
            self.structs.accepts(name)
        }
    }

    /// Whether any typedef can be listed (else readers skip looking at typedefs).
    pub fn lists_typedefs(&self) -> bool {
        self.all_typedefs || !self.typedefs.is_empty()
    }
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
            variables_for: Vec::new(),
            rust: false,
            code: false,
            typed: false,
        }
    }
}
