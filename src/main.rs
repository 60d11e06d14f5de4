//! The `layout-diff` binary: parse the command line, run the library, map the outcome
//! to an exit code (0 nothing flagged/found, 1 flagged, 2 error), print one line on error.

use std::io::Write;
use std::process::ExitCode;

mod cli;

use cli::args::{Cli, Command};

/// mimalloc: the loader and the diff make millions of small allocations on two threads;
/// glibc's per-thread arenas spent a fifth of the snapshot diff growing their heaps.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Keeps transparent huge pages (2 MiB) off the heap whatever the system's setting
/// (mimalloc is built with `no_thp`, so it never asks for them): a vmlinux load touches
/// ~700 MiB as it grows, and clearing huge pages for it was 10-20% of its samples; on
/// this project's VM, huge pages sped the snapshot-pair diff from ~70 to ~45 ms when
/// quiet, but after a large process had freed its memory most runs took 130-190 ms in
/// system time, which a benchmark median then shows.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // Refused only by kernels without the switch, which then decide as before.
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

fn main() -> ExitCode {
    no_huge_pages();
    let cli = Cli::parse_args();
    let outcome = match cli.command {
        Command::Show(args) => cli::show::show(&args),
        Command::Diff(args) => cli::diff::diff(&args),
        Command::Check(args) => cli::check::check(&args),
        Command::Whatif(args) => cli::whatif::whatif(&args),
        Command::Suggest(args) => cli::suggest::suggest(&args),
        Command::Snapshot(args) => cli::series::snapshot(&args),
        Command::History(args) => cli::series::history(&args),
        Command::Cache(args) => cli::cache::cache(&args),
        Command::BenchWalk(args) => cli::series::bench_walk(&args),
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
