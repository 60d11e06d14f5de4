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
    Profile {
        /// Which perf report it is.
        kind: Kind,
        /// What it measured.
        measured: Measured,
    },
    /// A hand-written list: one name, glob or `sym+0xOFF` per line.
    Names(Vec<String>),
}

impl HotInput {
    /// What kind of file it is, as reports name it (`perf c2c report`, `list of names`
    /// or the perf command of a profile, `Kind::tool`).
    pub fn format(&self) -> &'static str {
        match self {
            HotInput::C2c(_) => "perf c2c report",
            HotInput::Profile { kind, .. } => kind.tool(),
            HotInput::Names(_) => "list of names",
        }
    }
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
    /// Neither a perf report nor a list of names: a line is no symbol name.
    #[error(
        "not a perf report or a list of names: line {line} is not a symbol name, glob or sym+0xOFF: {text:?}"
    )]
    NotNames {
        /// The line, counted from 1.
        line: usize,
        /// The line (its first 60 characters).
        text: String,
    },
    /// Nothing but blank lines and comments.
    #[error("no entries: neither a perf report nor a name, glob or sym+0xOFF on a line")]
    NoEntries,
}

/// Reads the text of a `--hot` file; an error says what is wrong with it.
pub fn read(text: &str) -> Result<HotInput, HotError> {
    if c2c::is_c2c(text) {
        return c2c::parse(text).map(HotInput::C2c).map_err(HotError::C2c);
    }
    if let Some(kind) = Kind::detect(text) {
        return Measured::parse(text, kind)
            .map(|measured| HotInput::Profile { kind, measured })
            .map_err(HotError::Profile);
    }
    let mut names = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let name = match l.split_once("+0x") {
            Some((name, off)) if u64::from_str_radix(off, 16).is_ok() => name,
            _ => l,
        };
        if !is_name(name) {
            return Err(HotError::NotNames {
                line: n + 1,
                text: l.chars().take(60).collect(),
            });
        }
        names.push(name.to_string());
    }
    if names.is_empty() {
        return Err(HotError::NoEntries);
    }
    Ok(HotInput::Names(names))
}

/// Whether a line of a hot list can name symbols: a symbol name (`name`, `name.cold`,
/// `__key.12`), a local one qualified by its file (`fork.c:name`, one colon) or a glob
/// of them; no spaces. A line of another kind of file (`/etc/passwd`, prose) is not.
fn is_name(s: &str) -> bool {
    let allowed =
        |c: char| c.is_ascii_alphanumeric() || "_.$:/-".contains(c) || "*?[]{},!^\\".contains(c);
    !s.is_empty() && s.chars().all(allowed) && s.matches(':').count() <= 1
}

/// Whether a hot-list name is a plain name (not a glob): only those count as measured.
pub fn is_plain_name(name: &str) -> bool {
    !name.contains(['*', '?', '[', '{'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        match read(text) {
            Ok(HotInput::Names(n)) => n,
            _ => panic!("not a list of names: {text:?}"),
        }
    }

    #[test]
    fn lists_of_names_globs_and_offsets() {
        assert_eq!(
            names(
                "# hot\nroot_user+0x20\n\n  fork.c:nr_threads  \npcpu_hot_*\n__key.12\n{a,b}_lock\n"
            ),
            [
                "root_user",
                "fork.c:nr_threads",
                "pcpu_hot_*",
                "__key.12",
                "{a,b}_lock"
            ]
        );
        assert_eq!(names("runqueues\n").len(), 1);
        assert_eq!(HotInput::Names(Vec::new()).format(), "list of names");
    }

    #[test]
    fn other_files_are_refused_with_the_line() {
        let err = |t: &str| read(t).err().map(|e| e.to_string());
        assert_eq!(
            err("root:x:0:0:root:/root:/bin/bash\n"),
            Some(
                "not a perf report or a list of names: line 1 is not a symbol name, glob or sym+0xOFF: \"root:x:0:0:root:/root:/bin/bash\""
                    .to_string()
            )
        );
        assert_eq!(
            err("# two words\nrunqueues\nsome garbage\n"),
            Some(
                "not a perf report or a list of names: line 3 is not a symbol name, glob or sym+0xOFF: \"some garbage\""
                    .to_string()
            )
        );
        assert_eq!(
            err(&format!("{}\n", "x(".repeat(40))),
            Some(format!(
                "not a perf report or a list of names: line 1 is not a symbol name, glob or sym+0xOFF: {:?}",
                "x(".repeat(30)
            ))
        );
        assert_eq!(
            err("# only a comment\n\n"),
            Some(
                "no entries: neither a perf report nor a name, glob or sym+0xOFF on a line"
                    .to_string()
            )
        );
        assert_eq!(err(""), err("\n"));
    }
}
