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

use anyhow::Result;

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

/// The names of a `--hot` list (none for a perf report, which is read as evidence).
pub(crate) fn hot_names(path: &std::path::Path) -> Result<Vec<String>> {
    Ok(match layout_diff_core::perf::read_file(path)? {
        HotInput::Names(names) => names,
        HotInput::C2c(_) | HotInput::Profile { .. } => Vec::new(),
    })
}

/// Reads the files of `--hot`, `--hot-list` and checks `--kaslr-offset`, for the
/// builds to be loaded (`evidence::gather`).
pub(crate) fn read_evidence(
    args: &args::EvidenceArgs,
) -> Result<layout_diff_core::evidence::gather::Read> {
    Ok(layout_diff_core::evidence::gather::read(
        layout_diff_core::evidence::gather::Sources {
            hot: &args.hot,
            hot_list: &args.hot_list,
            kaslr_offset: args.kaslr_offset,
        },
    )?)
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
