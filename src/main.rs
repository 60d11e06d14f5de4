//! The `layout-diff` binary: parse the command line, run the library, map the outcome
//! to an exit code (0 nothing flagged/found, 1 flagged, 2 error), print one line on error.

use std::io::Write;
use std::process::ExitCode;

mod cli;

use cli::args::{Cli, Command};

/// mimalloc: the loader and the diff make millions of small allocations on two threads
/// (docs/benchmark.md says what glibc's allocator cost).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Keeps transparent huge pages (2 MiB) off the heap whatever the system's setting
/// (mimalloc is built with `no_thp`, so it never asks for them): clearing them for a
/// vmlinux load, and their cost after a large process freed its memory, outweighed what
/// they saved (docs/benchmark.md).
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // Refused only by kernels without the switch, which then decide as before.
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

fn main() -> ExitCode {
    no_huge_pages();
    let (cli, matches) = Cli::parse_args();
    let outcome = match cli.command {
        Command::Show(args) => cli::show::show(&args),
        Command::Diff(args) => cli::diff::diff(&args),
        Command::Check(args) => cli::check::check(&args),
        Command::Whatif(args) => cli::whatif::whatif(&args, &matches),
        Command::Suggest(args) => cli::suggest::suggest(&args),
        Command::Snapshot(args) => cli::series::snapshot(&args),
        Command::History(args) => cli::series::history(&args),
        Command::Cache(args) => cli::cache::cache(&args),
        Command::BenchWalk(args) => cli::series::bench_walk(&args),
        Command::Generate(args) => cli::generate::generate(&args),
    };
    match outcome {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            if let Err(e) = stdout
                .write_all(out.text.as_bytes())
                .and_then(|_| stdout.flush())
                && e.kind() != std::io::ErrorKind::BrokenPipe
            {
                eprintln!("layout-diff: writing output: {e}");
                return ExitCode::from(2);
            }
            if let Some(note) = out.note {
                eprintln!("layout-diff: {note}");
            }
            ExitCode::from(out.code)
        }
        Err(e) => {
            eprintln!("layout-diff: {e:#}");
            ExitCode::from(2)
        }
    }
}
