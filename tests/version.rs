//! `--version`: the crate version, then the commit the binary was built from when it
//! was built in a git checkout of this repository (build.rs).

mod common;

use std::path::Path;
use std::process::Command;

/// The full commit of HEAD when this package's directory is the top of a git work
/// tree, as build.rs decides.
fn checkout_head() -> Option<String> {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(top)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let toplevel = git(&["rev-parse", "--show-toplevel"])?;
    if Path::new(&toplevel).canonicalize().ok()? != top.canonicalize().ok()? {
        return None;
    }
    git(&["rev-parse", "HEAD"])
}

#[test]
fn version_is_the_crate_version_and_the_commit_built_from() {
    for flag in ["--version", "-V"] {
        let (code, out, err) = common::run(&[flag]);
        assert_eq!((code, err.as_str()), (0, ""), "{flag}");
        let line = out.strip_suffix('\n').expect("one line");
        let rest = line
            .strip_prefix(concat!("layout-diff ", env!("CARGO_PKG_VERSION")))
            .unwrap_or_else(|| panic!("{flag}: {line:?}"));
        match checkout_head() {
            None => assert_eq!(rest, "", "{flag}: not built from a checkout"),
            Some(head) => {
                // " (abc1234)" or " (abc1234, dirty)": the short commit is HEAD's.
                let inner = rest
                    .strip_prefix(" (")
                    .and_then(|r| r.strip_suffix(')'))
                    .unwrap_or_else(|| panic!("{flag}: {line:?}"));
                let commit = inner.strip_suffix(", dirty").unwrap_or(inner);
                assert!(
                    commit.len() >= 7 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
                    "{flag}: {line:?}"
                );
                assert!(
                    head.starts_with(commit),
                    "{flag}: {commit} is not HEAD {head}"
                );
            }
        }
    }
}
