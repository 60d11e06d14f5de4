//! Glue for the commands about series of builds: `snapshot` (one build to a small
//! file), `history` (one row per build) and the hidden `bench-walk` (the DIE-walk
//! floor). Loading and computing live in the library; this only wires and renders.

use anyhow::{Context, Result};

use super::Output;
use super::args::{BenchWalkArgs, HistoryArgs, SnapshotArgs};
use layout_diff_core::InputFile;
use layout_diff_core::load::LoadOptions;
use layout_diff_core::show;
use layout_diff_report::{Format, history_text, json, string};

/// `layout-diff snapshot VMLINUX -o FILE`.
pub fn snapshot(args: &SnapshotArgs) -> Result<Output> {
    let mut file = InputFile::open(&args.file)?;
    if file.is_snapshot() {
        anyhow::bail!("{}: is already a snapshot", args.file.display());
    }
    if let Some(list) = &args.symbol_list {
        file = file.with_symbols(list)?;
    }
    let t0 = std::time::Instant::now();
    let bar = super::progress(&format!(
        "reading {} and writing the snapshot",
        args.file.display()
    ));
    let written = file.for_snapshot(args.with_lines).and_then(|parts| {
        layout_diff_core::snapshot::write(
            &parts.image,
            &parts.elf_files,
            parts.lines.as_deref(),
            &args.output,
        )
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let written = written?;
    Ok(Output {
        text: String::new(),
        code: 0,
        note: Some(format!(
            "wrote {} ({} bytes; {} before compression) in {:.2} s",
            args.output.display(),
            written.file,
            written.payload,
            t0.elapsed().as_secs_f64()
        )),
    })
}

/// A bar counting `len` steps on stderr, only when stderr is a terminal.
fn progress_count(message: &str, len: usize) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} {pos}/{len} {bar:30}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message(message.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

/// `layout-diff history BUILD...`.
pub fn history(args: &HistoryArgs) -> Result<Output> {
    let mut symbols = args.symbols.clone();
    if let Some(hot) = &args.hot {
        symbols.extend(super::hot_names(hot)?);
    }
    if symbols.is_empty() && args.structs.is_empty() {
        anyhow::bail!("history needs --symbol, --struct or --hot");
    }
    let sym_set = (!symbols.is_empty())
        .then(|| show::globs(&symbols))
        .transpose()
        .context("bad --symbol or --hot pattern")?;
    let struct_set = (!args.structs.is_empty())
        .then(|| show::globs(&args.structs))
        .transpose()
        .context("bad --struct pattern")?;
    let options = history_options(args, struct_set.as_ref());
    // Each build is read, reduced to its rows and dropped, two at a time: a series of
    // hundreds of builds holds their rows, not their images. The first failure in
    // series order is the one reported, whatever the thread count.
    use rayon::prelude::*;
    let cache = super::cache::for_command(&args.common)?;
    let bar = progress_count("reading builds", args.files.len());
    let read = |path: &std::path::PathBuf| -> layout_diff_core::Result<_> {
        let file = InputFile::open(path)?.through_cache(cache.as_ref());
        let image = file.load(&options)?;
        let facts = layout_diff_core::history::facts(&image, sym_set.as_ref(), struct_set.as_ref());
        if let Some(b) = &bar {
            b.inc(1);
        }
        Ok(facts)
    };
    let builds = args.files.par_iter().map(read).collect::<Vec<_>>();
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let mut builds = builds
        .into_iter()
        .collect::<layout_diff_core::Result<Vec<_>>>()?;
    same_line_size(&builds)?;
    // Rows another build's patterns selected and this one's did not (rare): read again.
    for (b, names) in layout_diff_core::history::missing(&builds) {
        let file = InputFile::open(&args.files[b])?.through_cache(cache.as_ref());
        let image = file.load(&options)?;
        layout_diff_core::history::add_rows(&mut builds[b], &image, &names);
    }
    let h = layout_diff_core::history::assemble(&builds);
    let found = !h.symbols.is_empty() || !h.structs.is_empty();
    let text = render_history(args, &h)?;
    Ok(Output {
        text,
        code: u8::from(!found),
        note: (!found).then(|| "no symbol or struct matches in any build".to_string()),
    })
}

/// What `history` reads of each build: the structs matching `--struct`, no variables.
fn history_options(args: &HistoryArgs, struct_set: Option<&globset::GlobSet>) -> LoadOptions {
    LoadOptions {
        line_size: args.common.line_size,
        rust: args.common.rust(),
        pahole_text: false,
        variables: false,
        variables_for: Vec::new(),
        structs: match struct_set {
            Some(set) => layout_diff_core::StructFilter::Matching(set.clone()),
            None => layout_diff_core::StructFilter::None,
        },
        dwarf: true,
        ..LoadOptions::default()
    }
}

/// Refuses a series whose builds have different line sizes.
fn same_line_size(builds: &[layout_diff_core::history::BuildFacts]) -> Result<()> {
    if let Some(first) = builds.first()
        && let Some(other) = builds.iter().find(|b| b.line_size != first.line_size)
    {
        anyhow::bail!(
            "{} and {} have different line sizes ({} and {}); give --line-size",
            first.path,
            other.path,
            first.line_size,
            other.line_size
        );
    }
    Ok(())
}

/// The history in the chosen format.
fn render_history(args: &HistoryArgs, h: &layout_diff_core::history::History) -> Result<String> {
    Ok(match args.common.format() {
        Format::Text => string(|o| history_text::render(o, h))?,
        Format::Markdown => string(|o| history_text::markdown(o, h))?,
        Format::Json => {
            let mut s = json::document("layout-diff-history", h)?;
            s.push('\n');
            s
        }
        // Formats added elsewhere (HTML) have no history rendering.
        #[allow(unreachable_patterns)]
        _ => anyhow::bail!("history has no html output; use --format text, json or markdown"),
    })
}

/// `layout-diff bench-walk FILE...`: the files walked concurrently, as a diff loads them.
pub fn bench_walk(args: &BenchWalkArgs) -> Result<Output> {
    let t0 = std::time::Instant::now();
    let files = args
        .files
        .iter()
        .map(|p| InputFile::open(p))
        .collect::<layout_diff_core::Result<Vec<_>>>()?;
    use rayon::prelude::*;
    let walked = files
        .par_iter()
        .map(|f| f.walk_dies(args.parse))
        .collect::<layout_diff_core::Result<Vec<_>>>()?;
    let secs = t0.elapsed().as_secs_f64();
    let mut text = String::new();
    for (f, w) in args.files.iter().zip(&walked) {
        text += &format!("{}: {} units, {} DIEs\n", f.display(), w.units, w.dies);
    }
    text += &format!("walk {secs:.3} s\n");
    Ok(Output {
        text,
        code: 0,
        note: None,
    })
}
