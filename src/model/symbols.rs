//! ELF-side model: sections and the symbols that matter for layout (functions and data
//! objects), with their per-CPU offset where they live in `.data..percpu`.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Section<'d> {
    pub name: &'d str,
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address: u64,
    pub size: u64,
    pub alignment: u64,
    pub compressed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolKind {
    Function,
    Object,
    Tls,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Binding {
    Global,
    Weak,
    Local,
}

/// Which address space a symbol is placed in: ordinary addresses, or offsets into the
/// per-CPU area (each CPU's copy is page aligned, so only the offset decides lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    Global,
    Percpu,
}

#[derive(Debug, Clone, Serialize)]
pub struct Symbol<'d> {
    pub name: &'d str,
    /// The `STT_FILE` symbol before a local symbol: tells apart statics with one name.
    pub file: Option<&'d str>,
    pub kind: SymbolKind,
    pub binding: Binding,
    pub section: &'d str,
    /// `st_value` as linked.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address: u64,
    pub size: u64,
    pub space: Space,
    /// The position that decides cache lines: the address, or the per-CPU offset
    /// (`st_value - __per_cpu_start`) for per-CPU symbols.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub place: u64,
}

impl Symbol<'_> {
    /// End of the bytes the symbol covers in its space; a zero-sized symbol covers one
    /// byte so that it still sits on a line.
    pub fn place_end(&self) -> u64 {
        self.place.saturating_add(self.size.max(1))
    }

    /// Name qualified by its file for local symbols: `file.c:name`.
    pub fn qualified_name(&self) -> String {
        match (self.binding, self.file) {
            (Binding::Local, Some(f)) => format!("{f}:{}", self.name),
            _ => self.name.to_string(),
        }
    }
}
