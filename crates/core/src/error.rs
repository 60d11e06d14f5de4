//! The library's error type: every failure names the input file and what is wrong with it,
//! so the binary can print one clear line and exit 2.

use std::path::PathBuf;

/// Everything that can go wrong while reading an input file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file cannot be opened or read.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        err: std::io::Error,
    },
    /// A directory given for a file.
    #[error("{path}: is a directory, not a vmlinux file")]
    IsDirectory {
        /// The directory.
        path: PathBuf,
    },
    /// An empty file.
    #[error("{path}: empty file, not an ELF file")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A file of no kind the tool reads.
    #[error("{path}: not an ELF file (bad magic)")]
    NotElf {
        /// The file.
        path: PathBuf,
    },
    /// An ELF file whose headers, sections or symbols do not parse.
    #[error("{path}: malformed ELF file: {message}")]
    Elf {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// One section that cannot be read (or decompressed, or relocated).
    #[error("{path}: section {section}: {message}")]
    Section {
        /// The file.
        path: PathBuf,
        /// The section's name.
        section: String,
        /// What is wrong.
        message: String,
    },
    /// DWARF that does not parse.
    #[error("{path}: malformed DWARF in {section} at offset {offset:#x}: {message}")]
    Dwarf {
        /// The file.
        path: PathBuf,
        /// The debug section it is in.
        section: &'static str,
        /// Where in that section.
        offset: u64,
        /// What gimli said.
        message: String,
    },
    /// A build without debug info, for a query that needs types.
    #[error("{path}: has no debug info (.debug_info); struct queries need DWARF")]
    NoDebugInfo {
        /// The file.
        path: PathBuf,
    },
    /// Any other problem with an input file (a snapshot, a symbol list, a hot list).
    #[error("{path}: {message}")]
    Input {
        /// The file.
        path: PathBuf,
        /// What is wrong, in one line.
        message: String,
    },
}

/// A result whose error is the library's `Error` unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;
