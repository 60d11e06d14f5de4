//! The executable sections of an ELF file (`SHF_EXECINSTR` with file bytes), for the
//! readers of machine code; kept apart from `elf::read` so that loading layouts never
//! touches the code.

use std::path::Path;

use object::{Object, ObjectSection, SectionKind};

use crate::error::{Error, Result};
use crate::model::CodeSection;

/// Every executable section of the ELF file `data` that has bytes in the file, in
/// section order; compressed or unreadable sections are left out.
pub fn code_sections<'d>(path: &Path, data: &'d [u8]) -> Result<Vec<CodeSection<'d>>> {
    let file = object::File::parse(data).map_err(|e| Error::Elf {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    // `object` gives `SHF_EXECINSTR` sections with bytes the kind `Text`.
    let executable = |s: &object::Section<'d, '_>| s.kind() == SectionKind::Text;
    Ok(file
        .sections()
        .filter(executable)
        .filter_map(|s| {
            let bytes = s.data().ok().filter(|b| !b.is_empty())?;
            Some(CodeSection {
                name: s.name().unwrap_or(""),
                address: s.address(),
                bytes,
            })
        })
        .collect())
}

/// The data sections of the ELF file `data` that hold the kernel's run-time function
/// pointers (ops tables, handlers, the syscall table): `.data*` and `.rodata*` with
/// bytes in the file, the per-CPU section left out. Boot-only data (`.init.data`) and
/// the tables of the build's own machinery (`__mcount_loc`, `.orc_*`, `__ex_table`,
/// ...) are not among them: a function named only there is not called through a
/// pointer at run time.
pub fn pointer_sections<'d>(path: &Path, data: &'d [u8]) -> Result<Vec<CodeSection<'d>>> {
    let file = object::File::parse(data).map_err(|e| Error::Elf {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let holds_pointers = |name: &str| {
        (name.starts_with(".data") || name.starts_with(".rodata"))
            && !name.starts_with(".data..percpu")
    };
    Ok(file
        .sections()
        .filter(|s| s.kind() != SectionKind::Text && s.name().is_ok_and(holds_pointers))
        .filter_map(|s| {
            let bytes = s.data().ok().filter(|b| !b.is_empty())?;
            Some(CodeSection {
                name: s.name().unwrap_or(""),
                address: s.address(),
                bytes,
            })
        })
        .collect())
}
