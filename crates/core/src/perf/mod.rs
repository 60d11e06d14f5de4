//! Everything read from perf: `perf c2c report --stdio` (hot lines, mapped back to the
//! objects and members on them), and the data-type and symbol profiles read as
//! measured evidence (`crate::evidence::measured`).

pub mod c2c;
pub mod hotmap;

use crate::evidence::measured::{Kind, Measured};

/// What one `--hot FILE` holds, recognised by its header words.
pub enum HotInput {
    /// `perf c2c report --stdio`: hot lines, to be mapped onto a build.
    C2c(c2c::C2cReport),
    /// A perf data-type or symbol profile: types, members, objects and functions.
    Profile(Measured),
    /// A hand-written list: one name, glob or `sym+0xOFF` per line.
    Names(Vec<String>),
}

/// Reads a `--hot` file: one line naming the file and the problem when it cannot be
/// read or is not usable.
pub fn read_file(path: &std::path::Path) -> crate::Result<HotInput> {
    let text = std::fs::read_to_string(path).map_err(|err| crate::Error::Input {
        path: path.to_path_buf(),
        message: format!("cannot read hot list: {err}"),
    })?;
    read(&text).map_err(|e| crate::Error::Input {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Why a `--hot` file's text is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HotError {
    /// It looks like a c2c report but lacks what one has.
    #[error("not a usable perf c2c report: {0}")]
    C2c(c2c::C2cError),
    /// It looks like a perf profile but cannot be read as one.
    #[error("{0}")]
    Profile(crate::evidence::measured::ProfileError),
}

/// Reads the text of a `--hot` file; an error says what is wrong with it.
pub fn read(text: &str) -> Result<HotInput, HotError> {
    if c2c::is_c2c(text) {
        return c2c::parse(text).map(HotInput::C2c).map_err(HotError::C2c);
    }
    if let Some(kind) = Kind::detect(text) {
        return Measured::parse(text, kind)
            .map(HotInput::Profile)
            .map_err(HotError::Profile);
    }
    Ok(HotInput::Names(
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| match l.split_once("+0x") {
                Some((name, off)) if u64::from_str_radix(off, 16).is_ok() => name.to_string(),
                _ => l.to_string(),
            })
            .collect(),
    ))
}

/// Whether a hot-list name is a plain name (not a glob): only those count as measured.
pub fn is_plain_name(name: &str) -> bool {
    !name.contains(['*', '?', '[', '{'])
}
