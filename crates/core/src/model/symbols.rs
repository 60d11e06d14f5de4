//! ELF-side model: sections and the symbols that matter for layout (functions and data
//! objects), with their per-CPU offset where they live in `.data..percpu`.

use serde::{Deserialize, Serialize};

/// One ELF section header that matters for layout.
#[derive(Debug, Clone, Serialize)]
pub struct Section<'d> {
    /// The section's name.
    pub name: &'d str,
    /// Its address.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address: u64,
    /// Its size in bytes (decompressed for a compressed section).
    pub size: u64,
    /// Its `sh_addralign`.
    pub alignment: u64,
    /// It is stored compressed (`SHF_COMPRESSED`).
    pub compressed: bool,
}

/// What an ELF symbol names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolKind {
    /// `STT_FUNC`: code.
    Function,
    /// `STT_OBJECT`: data.
    Object,
    /// `STT_TLS`: thread-local data.
    Tls,
}

/// An ELF symbol's binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Binding {
    /// `STB_GLOBAL`.
    Global,
    /// `STB_WEAK`.
    Weak,
    /// `STB_LOCAL`: static, seen only in its file.
    Local,
}

/// Which address space a symbol is placed in: ordinary addresses, or offsets into the
/// per-CPU area (each CPU's copy is page aligned, so only the offset decides lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    /// Ordinary addresses.
    Global,
    /// Offsets into the per-CPU area.
    Percpu,
}

/// A function or data object of the symbol table, with where it decides lines.
#[derive(Debug, Clone, Serialize)]
pub struct Symbol<'d> {
    /// The symbol's name as the symbol table spells it.
    pub name: &'d str,
    /// For a local symbol, the file it is printed with: the shortest suffix of its
    /// compile unit's path that no other symbol of its name shares (`cpu/amd.c`), or
    /// the `STT_FILE` name before it when its unit is unknown.
    pub file: Option<&'d str>,
    /// For a local symbol, the path of its compile unit (`DW_AT_name`), found through
    /// the code ranges or variables of the `STT_FILE` group it belongs to.
    pub unit: Option<&'d str>,
    /// The compile unit any symbol, global or local, was compiled in, as DWARF says
    /// (the unit whose code ranges hold a function, or which defines a variable): the
    /// object file whose input section the linker placed it from.
    #[serde(skip)]
    pub compile_unit: Option<&'d str>,
    /// Which `STT_FILE` group of the symbol table a local symbol follows (1-based; 0
    /// for globals): symbols of one group come from one object file.
    #[serde(skip)]
    pub group: u32,
    /// Function, object or thread-local.
    pub kind: SymbolKind,
    /// Global, weak or local.
    pub binding: Binding,
    /// The output section it is in.
    pub section: &'d str,
    /// `st_value` as linked.
    #[serde(serialize_with = "crate::model::hex::addr")]
    pub address: u64,
    /// `st_size`, bounded by the end of the symbol's section.
    pub size: u64,
    /// Ordinary addresses or the per-CPU area.
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

    /// Whether `pred` holds for a name the symbol answers to when asked for: its bare
    /// name, its qualified name, and for a local with a known unit `suffix:name` for each
    /// path suffix of the unit (`amd.c:x`, `cpu/amd.c:x`, ...,
    /// `arch/x86/kernel/cpu/amd.c:x`), tried in that order. The forms are spelled one at
    /// a time into one buffer: a pattern is tried on every symbol of a build, and a list
    /// of owned names per symbol was a sixth of `show --symbol` on a snapshot.
    pub fn any_name(&self, mut pred: impl FnMut(&str) -> bool) -> bool {
        if pred(self.name) {
            return true;
        }
        let mut buf = String::new();
        // A Rust symbol answers to its demangled name too (qualified when local).
        if rust_name(self.name).is_some() && pred(self.spell_qualified_name(&mut buf)) {
            return true;
        }
        if self.binding != Binding::Local {
            return false;
        }
        if self.file.is_some() && pred(self.spell_qualified_name(&mut buf)) {
            return true;
        }
        let Some(unit) = self.unit else {
            return false;
        };
        std::iter::once(0)
            .chain(unit.match_indices('/').map(|(i, _)| i + 1))
            .any(|i| {
                buf.clear();
                buf.push_str(&unit[i..]);
                buf.push(':');
                buf.push_str(self.name);
                pred(&buf)
            })
    }

    /// Whether the symbol answers to exactly `asked` (`any_name` with equality). A C
    /// symbol's every form ends with its bare name, so one that `asked` does not end
    /// with is passed over without spelling any: finding one object by name among a
    /// build's 100 K symbols, which whatif and every suggest candidate do, spelled
    /// their qualified names one by one.
    pub fn answers_to(&self, asked: &str) -> bool {
        if !asked.ends_with(self.name) && rust_name(self.name).is_none() {
            return false;
        }
        self.any_name(|n| n == asked)
    }

    /// Where a local comes from, the same in both builds: its unit path, else its
    /// `STT_FILE` name.
    pub fn origin(&self) -> Option<&'d str> {
        self.unit.or(self.file)
    }

    /// Name qualified by its file for local symbols: `file.c:name`.
    pub fn qualified_name(&self) -> String {
        let mut out = String::new();
        self.spell_qualified_name(&mut out);
        out
    }

    /// Writes `qualified_name` into `buf` (cleared first), for callers that spell it
    /// for every symbol of a build and keep few.
    pub fn spell_qualified_name<'b>(&self, buf: &'b mut String) -> &'b str {
        buf.clear();
        // Built by hand, not with `format!`: the diff names tens of thousands.
        if let (Binding::Local, Some(f)) = (self.binding, self.file) {
            buf.reserve(f.len() + 1 + self.name.len());
            buf.push_str(f);
            buf.push(':');
        }
        match rust_name(self.name) {
            Some(d) => {
                use std::fmt::Write;
                // `{:#}`: the path without the hash. Writing to a String cannot fail.
                let _ = write!(buf, "{d:#}");
            }
            None => buf.push_str(self.name),
        }
        buf
    }
}

/// A Rust symbol (`_R...` v0 or legacy `_ZN...E`) demangled (rustc-demangle), as every
/// report prints it; `None` for a C name.
pub fn rust_name(name: &str) -> Option<rustc_demangle::Demangle<'_>> {
    if !rust_prefixed(name) {
        return None;
    }
    rustc_demangle::try_demangle(name).ok()
}

/// Whether `name` starts as a Rust symbol's does (`_R`, `_ZN`): every name `rust_name`
/// demangles does, without demangling it.
pub fn rust_prefixed(name: &str) -> bool {
    name.starts_with("_R") || name.starts_with("_ZN")
}

#[cfg(test)]
impl Symbol<'static> {
    /// A global `.data` object at `place` (tests of placement and causes).
    pub(crate) fn test_object(name: &'static str, place: u64, size: u64) -> Symbol<'static> {
        Symbol {
            name,
            file: None,
            unit: None,
            compile_unit: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name tried, in order, when none matches.
    fn tried(s: &Symbol<'_>) -> Vec<String> {
        let mut out = Vec::new();
        assert!(!s.any_name(|n| {
            out.push(n.to_string());
            false
        }));
        out
    }

    /// `answers_to` says what `any_name` with equality says, for every form and for
    /// names that are not forms (a Rust symbol's demangled name does not end with
    /// its mangled one, and is still found).
    #[test]
    fn answers_to_is_any_name_with_equality() {
        let mut s = Symbol::test_object("x", 0x1000, 8);
        s.file = Some("cpu/amd.c");
        s.unit = Some("arch/x86/kernel/cpu/amd.c");
        s.binding = Binding::Local;
        let asked = [
            "x",
            "amd.c:x",
            "cpu/amd.c:x",
            "md.c:x",
            "y",
            "amd.c:y",
            ":x",
            "",
        ];
        let got: Vec<bool> = asked.iter().map(|a| s.answers_to(a)).collect();
        assert_eq!(got, [true, true, true, false, false, false, false, false]);
        for a in asked {
            assert_eq!(s.answers_to(a), s.any_name(|n| n == a), "{a}");
        }
        let rust = Symbol::test_object("_RNvCs1234_5krate3foo", 0x2000, 8);
        assert!(rust.answers_to("krate::foo"));
        assert!(!rust.answers_to("krate::bar"));
    }

    #[test]
    fn any_name_tries_bare_qualified_and_unit_suffix_forms_in_order() {
        let mut s = Symbol::test_object("x", 0x1000, 8);
        s.file = Some("cpu/amd.c");
        s.unit = Some("arch/x86/kernel/cpu/amd.c");
        // A global answers to its bare name only, whatever its file and unit.
        assert_eq!(tried(&s), ["x"]);
        s.binding = Binding::Local;
        assert_eq!(
            tried(&s),
            [
                "x",
                "cpu/amd.c:x",
                "arch/x86/kernel/cpu/amd.c:x",
                "x86/kernel/cpu/amd.c:x",
                "kernel/cpu/amd.c:x",
                "cpu/amd.c:x",
                "amd.c:x",
            ]
        );
        // The first match ends the search.
        let mut seen = 0;
        assert!(s.any_name(|n| {
            seen += 1;
            n == "kernel/cpu/amd.c:x"
        }));
        assert_eq!(seen, 5);
        // A local with no unit: its `STT_FILE` name only.
        s.unit = None;
        assert_eq!(tried(&s), ["x", "cpu/amd.c:x"]);
        s.file = None;
        assert_eq!(tried(&s), ["x"]);
    }
}
