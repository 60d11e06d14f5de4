//! Object files recompiled with a change (`make path/file.o`): their allocated
//! sections' symbols, offsets, sizes and alignments, which replace the old ones in
//! the link model: the only way to predict code size changes.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind as ObjKind};

use super::error::ObjectError;
use crate::model::{Binding, SymbolKind};

/// One symbol of an object file's section.
#[derive(Debug, Clone)]
pub struct ObjSymbol {
    /// The symbol's name.
    pub name: String,
    /// Its offset in the section.
    pub offset: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Function or data object.
    pub kind: SymbolKind,
    /// Global, weak or local.
    pub binding: Binding,
}

/// One allocated section of an object file, with its functions and data objects in
/// offset order.
#[derive(Debug, Clone)]
pub struct ObjSection {
    /// The section's name.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its alignment.
    pub align: u64,
    /// Its functions and data objects, in offset order.
    pub symbols: Vec<ObjSymbol>,
}

/// A recompiled object file.
#[derive(Debug, Clone)]
pub struct ObjectFile {
    /// The file read.
    pub path: PathBuf,
    /// Its allocated sections.
    pub sections: Vec<ObjSection>,
    /// The source file its `STT_FILE` symbol names (`signal.c`: gcc writes the
    /// basename), when it has one.
    pub source: Option<String>,
}

impl ObjectFile {
    /// Reads `path`, a relocatable ELF object; one line naming the file and the
    /// problem otherwise.
    pub fn read(path: &Path) -> Result<ObjectFile, ObjectError> {
        let data = std::fs::read(path).map_err(|err| ObjectError::Read {
            path: path.to_path_buf(),
            err,
        })?;
        let file = object::File::parse(&*data).map_err(|err| ObjectError::NotObject {
            path: path.to_path_buf(),
            err,
        })?;
        if file.kind() != object::ObjectKind::Relocatable {
            return Err(ObjectError::NotRelocatable {
                path: path.to_path_buf(),
            });
        }
        let source = file
            .symbols()
            .find(|s| s.kind() == ObjKind::File)
            .and_then(|s| s.name().ok().map(str::to_string))
            .filter(|n| !n.is_empty());
        let sections = sections_of(&file);
        Ok(ObjectFile {
            path: path.to_path_buf(),
            sections,
            source,
        })
    }

    /// Whether `unit` (a compile unit's path, `kernel/signal.c`) is the source of
    /// this file (`.../kernel/signal.o`): equal paths without their extensions,
    /// compared by whole trailing components. A file renamed after the build
    /// (`o2-fn-add.o`, its name no longer its source's) is matched by the source its
    /// `STT_FILE` names, by basename (the caller also asks that the unit's input
    /// section hold its symbols).
    pub fn is_from(&self, unit: &str) -> bool {
        let stem = |p: &str| {
            p.rsplit_once('.')
                .map_or(p.to_string(), |(s, _)| s.to_string())
        };
        let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
        let path = self.path.to_string_lossy();
        let (mine, theirs) = (stem(&path), stem(unit));
        if mine == theirs
            || mine
                .strip_suffix(theirs.as_str())
                .is_some_and(|head| head.ends_with('/'))
        {
            return true;
        }
        match &self.source {
            Some(source) if stem(&base(&path)) != stem(source) => base(unit) == *source,
            _ => false,
        }
    }
}

/// The allocated sections of `file` that hold symbols, each with its functions and
/// objects (not the kernel's noise: `__pfx_` padding, `__cfi_` hashes, local labels)
/// in offset order, larger first.
fn sections_of(file: &object::File<'_>) -> Vec<ObjSection> {
    let mut sections: Vec<ObjSection> = Vec::new();
    let mut index_of = std::collections::HashMap::new();
    for s in file.sections() {
        let alloc = matches!(
            s.kind(),
            SectionKind::Text
                | SectionKind::Data
                | SectionKind::ReadOnlyData
                | SectionKind::ReadOnlyString
                | SectionKind::UninitializedData
        );
        if !alloc {
            continue;
        }
        index_of.insert(s.index(), sections.len());
        sections.push(ObjSection {
            name: s.name().unwrap_or("").to_string(),
            size: s.size(),
            align: s.align().max(1),
            symbols: Vec::new(),
        });
    }
    for sym in file.symbols() {
        let kind = match sym.kind() {
            ObjKind::Text => SymbolKind::Function,
            ObjKind::Data => SymbolKind::Object,
            _ => continue,
        };
        let Some(index) = sym.section_index() else {
            continue;
        };
        let Some(&at) = index_of.get(&index) else {
            continue;
        };
        let Ok(name) = sym.name() else { continue };
        if name.is_empty() || crate::kernel::noise(name).is_some() {
            continue;
        }
        sections[at].symbols.push(ObjSymbol {
            name: name.to_string(),
            offset: sym.address(),
            size: sym.size(),
            kind,
            binding: if sym.is_weak() {
                Binding::Weak
            } else if sym.is_global() {
                Binding::Global
            } else {
                Binding::Local
            },
        });
    }
    for s in &mut sections {
        s.symbols.sort_by(|a, b| {
            (a.offset, std::cmp::Reverse(a.size), &a.name).cmp(&(
                b.offset,
                std::cmp::Reverse(b.size),
                &b.name,
            ))
        });
    }
    sections.retain(|s| !s.symbols.is_empty());
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_file_is_matched_to_its_unit_by_whole_path_components() {
        let o = ObjectFile {
            path: PathBuf::from("/tmp/objs/kernel/signal.o"),
            sections: Vec::new(),
            source: Some("signal.c".into()),
        };
        assert!(o.is_from("kernel/signal.c"));
        assert!(!o.is_from("arch/x86/kernel/signal.c"));
        assert!(!o.is_from("nal.c"));
        let bare = ObjectFile {
            path: PathBuf::from("signal.o"),
            sections: Vec::new(),
            source: Some("signal.c".into()),
        };
        assert!(bare.is_from("signal.c"));
        assert!(!bare.is_from("kernel/signal.c"));
        // Renamed after the build: its STT_FILE names the source.
        let renamed = ObjectFile {
            path: PathBuf::from("testdata/predict/o2-fn-add.o"),
            sections: Vec::new(),
            source: Some("fn.c".into()),
        };
        assert!(renamed.is_from("fn.c"));
        assert!(renamed.is_from("lib/fn.c"));
        assert!(!renamed.is_from("data.c"));
    }

    #[test]
    fn a_relocatable_fixture_is_read_with_its_sections_and_a_non_object_is_refused() {
        let root = testdata!();
        let o = ObjectFile::read(&root.join("old.o")).unwrap();
        let text = o
            .sections
            .iter()
            .find(|s| s.name == ".text")
            .expect(".text");
        assert!(text.symbols.iter().all(|s| s.kind == SymbolKind::Function));
        assert_eq!(text.align, 64); // readelf -S -W old.o: .text Al 64
        let path = root.join("old.elf");
        let err = ObjectFile::read(&path).unwrap_err();
        assert!(matches!(&err, ObjectError::NotRelocatable { path: p } if *p == path));
        assert_eq!(
            err.to_string(),
            format!("{}: not a relocatable object (.o) file", path.display())
        );
    }
}
