//! A reader that stops early (`layout-diff ... | head -1`): the binary writes its output
//! to stdout after rendering it; when the pipe is closed, it ends with the exit code of
//! the report, says nothing on stderr and does not panic.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{run, testdata};

/// Runs the binary, reads one line of stdout and closes the pipe; returns the exit code,
/// the line and stderr. The outputs used here are larger than a pipe's buffer (64 KiB)
/// and the line's read, so the binary is still writing when the pipe closes.
fn first_line_then_close(args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("layout-diff"))
        .env("XDG_CACHE_HOME", common::cache_home())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let mut line = String::new();
    {
        let stdout = child.stdout.take().expect("stdout piped");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("one line");
    }
    let out = child.wait_with_output().expect("binary ends");
    (
        out.status.code().unwrap_or(-1),
        line,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_pipe_ends_quietly_with_the_reports_exit_code() {
    let (old, new) = (testdata("old.elf"), testdata("new.elf"));
    let cases: [Vec<&str>; 2] = [
        vec![
            "diff", &old, &new, "--format", "html", "--struct", "*", "--symbol", "*",
        ],
        vec!["show", &old, "--symbol", "*", "--format", "json"],
    ];
    for args in cases {
        let (code, full, err) = run(&args);
        assert!(full.len() > 100_000, "{args:?}: {} bytes", full.len());
        assert_eq!(err, "", "{args:?}");
        let (closed_code, line, closed_err) = first_line_then_close(&args);
        assert_eq!(
            (closed_code, closed_err.as_str()),
            (code, ""),
            "{args:?}: stderr {closed_err}"
        );
        assert_eq!(Some(line.as_str()), full.split_inclusive('\n').next());
    }
}
