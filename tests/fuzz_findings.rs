//! The inputs the fuzzers found and `fuzz/findings/` keeps (crashes and hangs once),
//! run through the binary as the image target runs them through the library: each is
//! diffed against itself and shown. Every one must load and diff to nothing, or be
//! refused with exit 2 and one line naming the file: never a panic, never a hang.

mod common;

use common::{run_timed, workspace_path};

#[test]
fn every_fuzz_finding_loads_or_is_refused_in_one_line() {
    // fuzz/ is the workspace's, not the published crate's.
    let Some(dir) = workspace_path("fuzz/findings") else {
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let (mut loaded, mut refused) = (0, 0);
    for f in &files {
        let path = f.display().to_string();
        for args in [
            vec!["--no-cache", path.as_str(), path.as_str()],
            vec!["show", "--no-cache", path.as_str()],
        ] {
            let (code, _, err) = run_timed(&args, 60);
            match code {
                0 => {
                    assert_eq!(err, "", "{args:?}");
                    loaded += 1;
                }
                2 => {
                    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
                    assert!(err.starts_with(&format!("layout-diff: {path}: ")), "{err}");
                    refused += 1;
                }
                _ => panic!("{args:?}: exit {code}: {err}"),
            }
        }
    }
    // 23 image findings (fuzz/findings/image-1 .. image-23): 19 load and diff to
    // nothing against themselves, 4 are refused (malformed DWARF, a section past the
    // file's end), by the diff and by show alike.
    assert_eq!(files.len(), 23);
    assert_eq!((loaded, refused), (38, 8));
}
