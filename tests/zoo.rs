//! The zoo: published layout regressions replayed on real Linux 6.1 builds
//! (bench/replay/zoo.toml), scored by bench/replay/zoo-score.py with this build's
//! binary. The builds live outside the repository (`bash bench/replay/zoo-build.sh`,
//! in /work/zoo by default): the test runs only when `LAYOUT_DIFF_ZOO` names them,
//! `LAYOUT_DIFF_ZOO=/work/zoo cargo test --release --test zoo -- --nocapture`, and
//! prints the scorer's table. Unset, it says so and passes at once (CI has no zoo).
//! Set to a directory without the builds, or with a build missing, it fails.
//!
//! The score itself is a measurement (the baseline is in docs/validation.md), not a
//! pass mark: the test fails when a case cannot be scored, not when it scores low.

mod common;

use std::path::PathBuf;
use std::process::Command;

#[test]
fn zoo_every_case_scored() {
    let Some(dir) = std::env::var_os("LAYOUT_DIFF_ZOO") else {
        eprintln!(
            "skipped: LAYOUT_DIFF_ZOO is not set (bash bench/replay/zoo-build.sh builds the \
             zoo; then LAYOUT_DIFF_ZOO=/work/zoo cargo test --release --test zoo)"
        );
        return;
    };
    let dir = PathBuf::from(dir);
    let out = if dir.join("out").join("base").is_dir() {
        dir.join("out")
    } else {
        dir.clone()
    };
    assert!(
        out.join("base").is_dir(),
        "LAYOUT_DIFF_ZOO={} holds no zoo builds: neither {}/base nor {}/out/base exists \
         (bash bench/replay/zoo-build.sh builds them)",
        dir.display(),
        dir.display(),
        dir.display()
    );
    let Some(script) = common::workspace_path("bench/replay/zoo-score.py") else {
        return;
    };
    let result = Command::new("python3")
        .arg(&script)
        .arg("--zoo")
        .arg(&dir)
        .arg("--layout-diff")
        .arg(env!("CARGO_BIN_EXE_layout-diff"))
        .env("XDG_CACHE_HOME", common::cache_home())
        .output()
        .expect("python3 runs bench/replay/zoo-score.py");
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    println!("{stdout}");
    assert!(
        result.status.success(),
        "zoo-score.py could not score every case in {} ({}): a build is missing or \
         layout-diff failed\n{stdout}\n{stderr}",
        dir.display(),
        result.status
    );
    assert!(
        stdout.contains("regressions caught"),
        "zoo-score.py printed no table:\n{stdout}\n{stderr}"
    );
}
