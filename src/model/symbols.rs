//! ELF-side model: sections and the symbols that matter for layout (functions and data
//! objects), with their per-CPU offset where they live in `.data..percpu`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize)]
pub struct Section<'d> {
    pub name: &'d str,
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address: u64,
    pub size: u64,
    pub alignment: u64,
    pub compressed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolKind {
    Function,
    Object,
    Tls,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Binding {
    Global,
    Weak,
    Local,
}

/// Which address space a symbol is placed in: ordinary addresses, or offsets into the
/// per-CPU area (each CPU's copy is page aligned, so only the offset decides lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    Global,
    Percpu,
}

#[derive(Debug, Clone, Serialize)]
pub struct Symbol<'d> {
    pub name: &'d str,
    /// For a local symbol, the file it is printed with: the shortest suffix of its
    /// compile unit's path that no other symbol of its name shares (`cpu/amd.c`), or
    /// the `STT_FILE` name before it when its unit is unknown.
    pub file: Option<&'d str>,
    /// For a local symbol, the path of its compile unit (`DW_AT_name`), found through
    /// the code ranges or variables of the `STT_FILE` group it belongs to.
    pub unit: Option<&'d str>,
    /// Which `STT_FILE` group of the symbol table a local symbol follows (1-based; 0
    /// for globals): symbols of one group come from one object file.
    #[serde(skip)]
    pub group: u32,
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

impl<'d> Symbol<'d> {
    /// End of the bytes the symbol covers in its space; a zero-sized symbol covers one
    /// byte so that it still sits on a line.
    pub fn place_end(&self) -> u64 {
        self.place.saturating_add(self.size.max(1))
    }

    /// Every name the symbol answers to when asked for: its bare name, its qualified
    /// name, and for a local with a known unit `suffix:name` for each path suffix of
    /// the unit (`amd.c:x`, `cpu/amd.c:x`, ..., `arch/x86/kernel/cpu/amd.c:x`).
    pub fn names(&self) -> Vec<String> {
        let mut out = vec![self.name.to_string(), self.qualified_name()];
        if self.binding == Binding::Local
            && let Some(unit) = self.unit
        {
            let starts = std::iter::once(0).chain(unit.match_indices('/').map(|(i, _)| i + 1));
            out.extend(starts.map(|i| format!("{}:{}", &unit[i..], self.name)));
        }
        out
    }

    /// Where a local comes from, the same in both builds: its unit path, else its
    /// `STT_FILE` name.
    pub fn origin(&self) -> Option<&'d str> {
        self.unit.or(self.file)
    }

    /// Name qualified by its file for local symbols: `file.c:name`.
    pub fn qualified_name(&self) -> String {
        match (self.binding, self.file) {
            // Built by hand, not with `format!`: the diff names tens of thousands.
            (Binding::Local, Some(f)) => {
                let mut out = String::with_capacity(f.len() + 1 + self.name.len());
                out.push_str(f);
                out.push(':');
                out.push_str(self.name);
                out
            }
            _ => self.name.to_string(),
        }
    }
}

#[cfg(test)]
impl Symbol<'static> {
    /// A global `.data` object at `place` (tests of placement and causes).
    pub(crate) fn test_object(name: &'static str, place: u64, size: u64) -> Symbol<'static> {
        Symbol {
            name,
            file: None,
            unit: None,
            group: 0,
            kind: SymbolKind::Object,
            binding: Binding::Global,
            section: ".data",
            address: place,
            size,
            space: Space::Global,
            place,
        }
    }
}
