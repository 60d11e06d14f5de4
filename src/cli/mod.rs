//! The binary's commands: `args.rs` holds every flag (clap), one file per command
//! turns its flags into library options, runs the library and renders; this file holds
//! what they share (the output and exit code, reading `--hot` files, loading).

pub mod args;
pub mod cache;
pub mod changes;
pub mod check;
pub mod diff;
pub mod generate;
pub mod series;
pub mod show;
pub mod suggest;
pub mod whatif;

use anyhow::{Context, Result};

use layout_diff_core::InputFile;
use layout_diff_core::load::LoadOptions;
use layout_diff_core::perf::HotInput;

/// What the binary prints and the exit code it ends with.
pub struct Output {
    pub text: String,
    pub code: u8,
    /// One line for stderr (e.g. "no struct matches").
    pub note: Option<String>,
}

/// Reads `--hot FILE`: a perf c2c report or profile (recognised by its header words),
/// else one name, glob or `sym+0xOFF` per line.
pub(crate) fn read_hot(path: &std::path::Path) -> Result<HotInput> {
    Ok(layout_diff_core::perf::read_file(path)?)
}

/// The names of a `--hot` list (none for a perf report, which is read as evidence).
pub(crate) fn hot_names(path: &std::path::Path) -> Result<Vec<String>> {
    Ok(match read_hot(path)? {
        HotInput::Names(names) => names,
        HotInput::C2c(_) | HotInput::Profile(_) => Vec::new(),
    })
}

/// The built-in known list with every `--hot-list` file added.
pub(crate) fn known_list(
    paths: &[std::path::PathBuf],
) -> Result<layout_diff_core::evidence::KnownList> {
    let mut list = layout_diff_core::evidence::KnownList::builtin();
    for p in paths {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("{}: cannot read hot list", p.display()))?;
        let more = layout_diff_core::evidence::KnownList::parse(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
        list.extend(more);
    }
    Ok(list)
}

/// The KASLR offset for a c2c report: `--kaslr-offset`, else inferred from `image`.
pub(crate) fn kaslr_for(
    report: &layout_diff_core::perf::c2c::C2cReport,
    image: &layout_diff_core::Image<'_>,
    given: Option<u64>,
    path: &std::path::Path,
) -> Result<layout_diff_core::perf::hotmap::Kaslr> {
    match given {
        Some(offset) => Ok(layout_diff_core::perf::hotmap::Kaslr::Given { offset }),
        None => layout_diff_core::perf::hotmap::infer_kaslr(report, image)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display())),
    }
}

/// A spinner on stderr while loading, only when stderr is a terminal.
pub(crate) fn progress(message: &str) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_message(message.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

/// What the diff and the commands built on it load: every struct and variable, the
/// code's data references (the judgement of shared lines reads them), no pahole
/// spellings.
pub(crate) fn diff_load_options(common: &args::Common) -> LoadOptions {
    LoadOptions {
        line_size: common.line_size,
        rust: common.rust(),
        pahole_text: false,
        code: true,
        ..LoadOptions::default()
    }
}

/// Loads two opened builds side by side, their local names made comparable; each
/// must have debug information.
/// Returns what the two can be compared on when they are of different kinds
/// (`load::common_ground`).
pub(crate) fn load_both<'c>(
    old_file: &'c InputFile,
    new_file: &'c InputFile,
    load: &LoadOptions,
) -> Result<(
    layout_diff_core::Image<'c>,
    layout_diff_core::Image<'c>,
    Vec<String>,
)> {
    let (old, new) = rayon::join(|| old_file.load(load), || new_file.load(load));
    let (mut old, mut new) = (old?, new?);
    layout_diff_core::load::align_local_names(&mut old, &mut new);
    let notes = layout_diff_core::load::common_ground(&mut old, &mut new);
    for img in [&old, &new] {
        if !img.has_debug_info {
            return Err(layout_diff_core::Error::NoDebugInfo {
                path: img.path.clone(),
            }
            .into());
        }
    }
    Ok((old, new, notes))
}
