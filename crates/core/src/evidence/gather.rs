//! The one owner of the evidence a command is given: `--hot FILE`, `--hot-list FILE`
//! and `--kaslr-offset` become the same `Hotness`, c2c maps and match counts for the
//! diff, `suggest`, `show` and `whatif`, so that no command reads them its own way or
//! drops one, and no `--hot` file is ignored without a word.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSetBuilder};
use rustc_hash::FxHashSet;
use serde::Serialize;

use super::{Hotness, KnownList, Measured};
use crate::model::Image;
use crate::perf::HotInput;
use crate::perf::hotmap::{self, HotMap, Kaslr};

/// The evidence options of a command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sources<'a> {
    /// `--hot FILE`, in the order given.
    pub hot: &'a [PathBuf],
    /// `--hot-list FILE`, in the order given.
    pub hot_list: &'a [PathBuf],
    /// `--kaslr-offset HEX`, for the perf c2c reports among `hot`.
    pub kaslr_offset: Option<u64>,
}

/// Why the evidence options cannot be used; every error is one line.
#[derive(Debug, thiserror::Error)]
pub enum GatherError {
    /// A file that cannot be read, is of no kind `--hot` reads, or matches nothing.
    #[error(transparent)]
    File(#[from] crate::Error),
    /// `--kaslr-offset` without a perf c2c report to apply it to.
    #[error("--kaslr-offset applies to a perf c2c report given with --hot")]
    KaslrWithoutC2c,
}

/// One `--hot` file, read and recognised.
pub struct HotFile {
    /// The file as given.
    pub path: PathBuf,
    /// What it holds.
    pub input: HotInput,
}

/// The evidence files, read before any build loads (`read`): a file that cannot be
/// used is refused before the long part starts.
pub struct Read {
    /// The built-in known list with every `--hot-list` file added.
    pub known: KnownList,
    /// Every `--hot` file, in the order given.
    pub hot: Vec<HotFile>,
    /// `--kaslr-offset`.
    pub kaslr_offset: Option<u64>,
}

impl Read {
    /// The names of every `--hot` list of names, in order: shown in full.
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.hot {
            if let HotInput::Names(names) = &f.input {
                out.extend(names.iter().cloned());
            }
        }
        out
    }

    /// Whether a perf c2c report is among the `--hot` files.
    pub fn has_c2c(&self) -> bool {
        self.hot.iter().any(|f| matches!(f.input, HotInput::C2c(_)))
    }

    /// The perf profiles among the `--hot` files.
    pub fn profiles(&self) -> impl Iterator<Item = &Measured> {
        self.hot.iter().filter_map(|f| match &f.input {
            HotInput::Profile { measured, .. } => Some(measured),
            _ => None,
        })
    }
}

/// How much of one `--hot` file the builds have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HotFileMatch {
    /// The file as given.
    pub path: String,
    /// What kind of file it is (`HotInput::format`).
    pub format: &'static str,
    /// Its entries: the lines of a list of names; the types, objects and functions of
    /// a perf profile; the hot lines of a perf c2c report.
    pub entries: usize,
    /// Those the builds have: a name or glob matching a symbol of either build; a
    /// struct type or symbol of that name in either; a hot line inside the build the
    /// report was recorded on (the others are heap or module lines).
    pub matched: usize,
}

impl HotFileMatch {
    /// Some entries matched and some did not.
    pub fn is_partial(&self) -> bool {
        self.matched > 0 && self.matched < self.entries
    }

    /// `--hot FILE: 12 of 15 entries matched`.
    pub fn note(&self) -> String {
        format!(
            "--hot {}: {} of {} entries matched",
            self.path, self.matched, self.entries
        )
    }
}

/// The evidence on the loaded builds.
pub struct Gathered {
    /// The known list and everything measured: the names of `--hot` lists (objects
    /// and functions), the perf profiles, the objects on each c2c report's hot lines.
    pub hotness: Hotness,
    /// Each perf c2c report mapped onto the build it was recorded on, with its file.
    pub maps: Vec<(PathBuf, HotMap)>,
    /// How much of each `--hot` file matched, in the order given.
    pub files: Vec<HotFileMatch>,
}

/// Reads every `--hot-list` and `--hot` file: one line naming the file and the
/// problem when one cannot be read or is of no kind `--hot` reads.
pub fn read(sources: Sources<'_>) -> Result<Read, GatherError> {
    let mut known = KnownList::builtin();
    for p in sources.hot_list {
        let text = std::fs::read_to_string(p)
            .map_err(|err| input(p, format!("cannot read hot list: {err}")))?;
        let more = KnownList::parse(&text).map_err(|e| input(p, e.to_string()))?;
        known.extend(more);
    }
    let hot = sources
        .hot
        .iter()
        .map(|p| {
            crate::perf::read_file(p).map(|input| HotFile {
                path: p.clone(),
                input,
            })
        })
        .collect::<crate::Result<Vec<_>>>()?;
    let read = Read {
        known,
        hot,
        kaslr_offset: sources.kaslr_offset,
    };
    if read.kaslr_offset.is_some() && !read.has_c2c() {
        return Err(GatherError::KaslrWithoutC2c);
    }
    Ok(read)
}

/// Turns the files read into evidence on `recorded` (the build perf ran on: OLD, or
/// the one build) and `other` (NEW, when there is one): every `--hot` file counted
/// against the builds, a list or profile of which nothing matches either refused, each
/// c2c report mapped onto `recorded` with the KASLR offset given or inferred.
/// Names and profiles are added first, in the order given, then the c2c objects (the
/// first entry read wins on a repeat).
pub fn gather(
    read: Read,
    recorded: &Image<'_>,
    other: Option<&Image<'_>>,
) -> Result<Gathered, GatherError> {
    let builds: Vec<&Image<'_>> = std::iter::once(recorded).chain(other).collect();
    let mut hotness = Hotness {
        known: read.known,
        measured: Measured::default(),
    };
    let (mut files, mut maps) = (Vec::new(), Vec::new());
    let mut c2c = Vec::new();
    for f in read.hot {
        let format = f.input.format();
        let (matched, entries) = match f.input {
            HotInput::Names(names) => {
                let matched = names_found(&f.path, &names, &builds)?;
                add_names(&mut hotness.measured, &names, &f.path);
                (matched, names.len())
            }
            HotInput::Profile { measured, .. } => {
                let found = profile_found(&measured, &builds);
                hotness.measured.extend(measured);
                found
            }
            HotInput::C2c(report) => {
                c2c.push((f.path.clone(), report, files.len()));
                (0, 0)
            }
        };
        if entries > 0 && matched == 0 {
            return Err(input(
                &f.path,
                format!(
                    "none of the {entries} entries of this {format} matches {}",
                    match other {
                        Some(_) => "either build",
                        None => "the build",
                    }
                ),
            )
            .into());
        }
        files.push(HotFileMatch {
            path: f.path.display().to_string(),
            format,
            entries,
            matched,
        });
    }
    for (path, report, at) in c2c {
        let kaslr = match read.kaslr_offset {
            Some(offset) => Kaslr::Given { offset },
            None => {
                hotmap::infer_kaslr(&report, recorded).map_err(|e| input(&path, e.to_string()))?
            }
        };
        let map = hotmap::map(&report, recorded, kaslr);
        add_c2c(&mut hotness.measured, &map);
        files[at].entries = map.lines.len();
        files[at].matched = map.lines.len() - map.outside;
        maps.push((path, map));
    }
    Ok(Gathered {
        hotness,
        maps,
        files,
    })
}

fn input(path: &Path, message: String) -> crate::Error {
    crate::Error::Input {
        path: path.to_path_buf(),
        message,
    }
}

/// Plain names of a `--hot` list count as measured, as objects and as functions.
fn add_names(measured: &mut Measured, names: &[String], path: &Path) {
    let from = format!("named in {}", path.display());
    for n in names.iter().filter(|n| crate::perf::is_plain_name(n)) {
        measured.add_object(n, "--hot list", from.clone());
        measured.add_function(n, "--hot list", from.clone());
    }
}

/// The objects on a c2c report's hot lines count as measured.
fn add_c2c(measured: &mut Measured, map: &HotMap) {
    for line in &map.lines {
        for o in &line.objects {
            let bare = o.name.rsplit(':').next().unwrap_or(&o.name);
            measured.add_object(
                bare,
                "perf c2c",
                format!("hot line #{} ({} HITM)", line.index, line.hitm),
            );
        }
    }
}

/// How many of `names` (names or globs) match a symbol of one of `builds`, by its
/// name or its qualified name (`file.c:name`).
fn names_found(
    path: &Path,
    names: &[String],
    builds: &[&Image<'_>],
) -> Result<usize, crate::Error> {
    let mut set = GlobSetBuilder::new();
    for (i, n) in names.iter().enumerate() {
        let glob = Glob::new(n).map_err(|e| input(path, format!("entry {}: {e}", i + 1)))?;
        set.add(glob);
    }
    let set = set.build().map_err(|e| input(path, e.to_string()))?;
    let mut found = vec![false; names.len()];
    let mut count = 0;
    let mut mark = |hits: &[usize]| {
        for &i in hits {
            count += usize::from(!std::mem::replace(&mut found[i], true));
        }
        count == found.len()
    };
    let (mut hits, mut buf) = (Vec::new(), String::new());
    for s in builds.iter().flat_map(|b| &b.symbols) {
        set.matches_into(s.name, &mut hits);
        let mut all = mark(&hits);
        let qualified = s.spell_qualified_name(&mut buf);
        if qualified != s.name {
            set.matches_into(qualified, &mut hits);
            all = mark(&hits);
        }
        if all {
            break;
        }
    }
    Ok(found.iter().filter(|f| **f).count())
}

/// (matched, entries) of a perf profile: its types found as struct names, its objects
/// and functions as symbol names, in one of `builds`.
fn profile_found(measured: &Measured, builds: &[&Image<'_>]) -> (usize, usize) {
    let types: FxHashSet<&str> = builds
        .iter()
        .flat_map(|b| &b.structs)
        .map(|s| s.name)
        .collect();
    let symbols: FxHashSet<&str> = builds
        .iter()
        .flat_map(|b| &b.symbols)
        .map(|s| s.name)
        .collect();
    measured.found(|t| types.contains(t), |n| symbols.contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::InputFile;
    use crate::load::LoadOptions;

    /// Writes `text` to a file of this process for one test.
    fn file(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("layout-diff-gather-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn sources(hot: &[PathBuf]) -> Sources<'_> {
        Sources {
            hot,
            hot_list: &[],
            kaslr_offset: None,
        }
    }

    #[test]
    fn a_partial_match_says_how_many_of_how_many() {
        let m = |matched, entries| HotFileMatch {
            path: "hot.txt".to_string(),
            format: "list of names",
            entries,
            matched,
        };
        assert_eq!(m(12, 15).note(), "--hot hot.txt: 12 of 15 entries matched");
        assert!(m(12, 15).is_partial());
        assert!(!m(15, 15).is_partial());
        assert!(!m(0, 5).is_partial());
    }

    /// testdata/check/base.elf (FACTS.md) has root_user (ffffffff82a510e0) and
    /// pcpu_hot_count; c2c.txt's 5 hot lines, 3 of them in base.elf at the inferred
    /// offset 0x1a400000, the first holding root_user (412 HITM).
    #[test]
    fn names_profiles_and_c2c_reports_are_counted_and_measured() {
        let dir = testdata!();
        let base = InputFile::open(&dir.join("check/base.elf")).unwrap();
        let img = base.load(&LoadOptions::default()).unwrap();
        let names = file("names.txt", "root_user+0x20\npcpu_hot_*\nno_such_thing\n");
        let profile = file(
            "profile.txt",
            "# Overhead  Data Type  Data Type Offset\n\
             \x20   60.00%  struct user_struct  struct user_struct +0 (__count)\n\
             \x20   40.00%  struct no_such_type  struct no_such_type +8 (x)\n",
        );
        let hot = [names.clone(), profile.clone(), dir.join("check/c2c.txt")];
        let read = read(sources(&hot)).unwrap();
        assert_eq!(read.names(), ["root_user", "pcpu_hot_*", "no_such_thing"]);
        assert!(read.has_c2c());
        let got = gather(read, &img, None).unwrap();
        let counts: Vec<(&str, usize, usize)> = got
            .files
            .iter()
            .map(|f| (f.format, f.matched, f.entries))
            .collect();
        assert_eq!(
            counts,
            [
                ("list of names", 2, 3),
                ("perf data-type profile", 1, 2),
                ("perf c2c report", 3, 5),
            ]
        );
        assert_eq!(got.maps.len(), 1);
        assert_eq!(got.maps[0].1.kaslr.offset(), 0x1a40_0000);
        // The list, read first, wins over the c2c report for root_user.
        assert_eq!(
            got.hotness.object("root_user", None).unwrap().to_string(),
            format!("measured: --hot list (named in {})", names.display())
        );
        assert_eq!(
            got.hotness.function("root_user").unwrap().to_string(),
            format!("measured: --hot list (named in {})", names.display())
        );
        assert_eq!(
            got.hotness
                .object("uidhash_lock", None)
                .unwrap()
                .to_string(),
            "measured: perf c2c (hot line #3 (28 HITM))"
        );
        // A glob is shown in full but is no evidence of its own.
        assert_eq!(got.hotness.object("pcpu_hot_*", None), None);
    }

    #[test]
    fn nothing_matched_or_an_offset_without_c2c_is_refused() {
        let dir = testdata!();
        let base = InputFile::open(&dir.join("check/base.elf")).unwrap();
        let img = base.load(&LoadOptions::default()).unwrap();
        let names = file("none.txt", "no_such_thing\nnor_this_*\n");
        let err = gather(
            read(sources(std::slice::from_ref(&names))).unwrap(),
            &img,
            Some(&img),
        )
        .err()
        .unwrap();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: none of the 2 entries of this list of names matches either build",
                names.display()
            )
        );
        let err = read(Sources {
            kaslr_offset: Some(0x1a40_0000),
            ..sources(&[names])
        })
        .err()
        .unwrap();
        assert_eq!(
            err.to_string(),
            "--kaslr-offset applies to a perf c2c report given with --hot"
        );
    }
}
