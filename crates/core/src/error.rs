//! The library's error type: every failure names the input file and what is wrong with it,
//! so the binary can print one clear line and exit 2.

use std::path::PathBuf;

/// Everything that can go wrong while reading an input file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    #[error("{path}: is a directory, not a vmlinux file")]
    IsDirectory { path: PathBuf },
    #[error("{path}: empty file, not an ELF file")]
    Empty { path: PathBuf },
    #[error("{path}: not an ELF file (bad magic)")]
    NotElf { path: PathBuf },
    #[error("{path}: malformed ELF file: {message}")]
    Elf { path: PathBuf, message: String },
    #[error("{path}: section {section}: {message}")]
    Section {
        path: PathBuf,
        section: String,
        message: String,
    },
    #[error("{path}: malformed DWARF in {section} at offset {offset:#x}: {message}")]
    Dwarf {
        path: PathBuf,
        section: &'static str,
        offset: u64,
        message: String,
    },
    #[error("{path}: has no debug info (.debug_info); struct queries need DWARF")]
    NoDebugInfo { path: PathBuf },
    #[error("{path}: {message}")]
    Input { path: PathBuf, message: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
