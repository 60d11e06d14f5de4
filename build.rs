//! `--version`: the crate version and, built from a git checkout of this repository, the
//! short commit and whether tracked files differed from it: `layout-diff 0.2.0
//! (abc1234)`, `layout-diff 0.2.0 (abc1234, dirty)`. Without git, outside a checkout,
//! or in a packaged crate (whose directory is not the top of a checkout, even when it
//! is unpacked inside one, as `cargo package` does under target/), just `layout-diff
//! 0.2.0`. The result is `LAYOUT_DIFF_VERSION` for clap.
//!
//! The script runs again only when HEAD, the branch it names (its ref file, or
//! packed-refs), the index, or the sources under src/ and crates/ change: a commit, a
//! checkout, `git add`, or an edit that rebuilds the binary anyway. An edit elsewhere
//! (a test, the README) can leave the dirty mark stale until one of those changes.
//!
//! A packaged crate and the checkout's crate get one build-script output directory
//! when they share a target directory (`cargo package` verifies there), so each
//! watches a path the other lacks: `crates/` in the checkout, `Cargo.toml.orig` in a
//! package. A build of one after the other then runs the script again instead of
//! taking the other's version.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets it");
    let full = match git_state(&manifest) {
        Some((commit, true)) => format!("{version} ({commit}, dirty)"),
        Some((commit, false)) => format!("{version} ({commit})"),
        None => {
            if manifest.join("Cargo.toml.orig").exists() {
                println!("cargo:rerun-if-changed=Cargo.toml.orig");
            }
            version
        }
    };
    println!("cargo:rustc-env=LAYOUT_DIFF_VERSION={full}");
}

/// Runs git in `dir`; its trimmed stdout when it ran and succeeded.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        // Never take the index lock (a status may otherwise refresh and write it).
        .arg("--no-optional-locks")
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}

/// The short commit and whether tracked files differ from it, when `manifest` is the
/// top of a git work tree; the files to watch are printed for cargo.
fn git_state(manifest: &Path) -> Option<(String, bool)> {
    let top = git(manifest, &["rev-parse", "--show-toplevel"])?;
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same(Path::new(&top), manifest) {
        return None;
    }
    let commit = git(manifest, &["rev-parse", "--short", "HEAD"])?;
    let dirty = !git(manifest, &["status", "--porcelain", "--untracked-files=no"])?.is_empty();

    // `--git-path` finds each file in a linked work tree too (HEAD and the index are
    // the work tree's, branch refs the repository's).
    let git_path =
        |name: &str| git(manifest, &["rev-parse", "--git-path", name]).map(|p| manifest.join(p));
    let mut watch = vec![git_path("HEAD"), git_path("index")];
    if let Some(branch) = git(manifest, &["symbolic-ref", "-q", "HEAD"]) {
        let loose = git_path(&branch);
        if loose.as_deref().is_some_and(Path::exists) {
            watch.push(loose);
        } else {
            watch.push(git_path("packed-refs"));
        }
    }
    watch.push(Some(manifest.join("src")));
    watch.push(Some(manifest.join("crates")));
    // A watched path that does not exist would make cargo run the script every time.
    for path in watch.into_iter().flatten().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    Some((commit, dirty))
}
