//! The workspace's fixture builds (`testdata/` at the repository's top) for the unit
//! tests. They belong to the `layout-diff` package; this crate's package ships without
//! them. Built from its `.crate` (which has `Cargo.toml.orig` beside its manifest), a
//! test that needs them says so on stderr and returns without checking anything; in
//! the workspace, a missing `testdata/` fails the test.

use std::io::Write;
use std::path::{Path, PathBuf};

/// `testdata/`, or `None` in a packaged crate (after saying the test is skipped).
pub(crate) fn testdata() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = manifest.join("../../testdata");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        manifest.join("Cargo.toml.orig").exists(),
        "{} is missing",
        dir.display()
    );
    // Straight to the process's stderr: the test harness captures eprintln!.
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {}: the workspace's testdata/ is not part of the packaged {} crate",
        std::thread::current().name().unwrap_or("a test"),
        env!("CARGO_PKG_NAME")
    );
    None
}

/// `testdata/` as a `PathBuf`, or returns from the calling test (see [`testdata`]).
macro_rules! testdata {
    () => {
        match crate::fixtures::testdata() {
            Some(dir) => dir,
            None => return,
        }
    };
}
