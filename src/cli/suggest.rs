//! `layout-diff suggest`: fixes for flagged objects, each checked by a prediction.

use anyhow::Result;

use super::args::{DiffArgs, ReportArgs, SuggestArgs};
use super::diff::{options, prepare};
use super::{Output, progress};
use layout_diff::InputFile;
use layout_diff::report::{Format, json};

/// `layout-diff suggest OLD NEW`: fixes for the flagged hot objects, each checked by
/// a prediction on NEW diffed against OLD.
pub fn suggest(args: &SuggestArgs) -> Result<Output> {
    let diff_args = DiffArgs {
        old: args.old.clone(),
        new: args.new.clone(),
        kaslr_offset: None,
        symbols: args.symbols.clone(),
        structs: Vec::new(),
        report: ReportArgs {
            all: true,
            evidence: args.evidence.clone(),
            ..ReportArgs::default()
        },
        common: args.common.clone(),
    };
    let prep = prepare(&diff_args)?;
    let load = super::diff_load_options(&args.common);
    let bar = progress("loading both builds");
    let (old_file, new_file) = InputFile::open_both(&args.old, &args.new)?;
    let (old, new) = super::load_both(&old_file, &new_file, &load)?;
    if let Some(b) = &bar {
        b.set_message("predicting fixes");
    }
    let mut options = options(&diff_args, &prep)?;
    options.listed_only = true;
    options.hotness = Some(&prep.hotness);
    let found = layout_diff::suggest::suggest(&old, &new, &options, &args.symbols)
        .map_err(anyhow::Error::msg)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let unfixed = found
        .suggestions
        .iter()
        .filter(|s| !s.fixes.iter().any(|f| f.restores))
        .count()
        + found
            .members
            .iter()
            .filter(|m| !m.fixes.iter().any(|f| f.restores))
            .count();
    let text = match args.common.format() {
        Format::Json => {
            let mut s = json::document("layout-diff-suggest", &found)?;
            s.push('\n');
            s
        }
        _ => layout_diff::report::string(|o| {
            layout_diff::report::suggest_text::render(o, &found, &args.old, &args.new)
        })?,
    };
    std::mem::forget((old, new));
    std::mem::forget((old_file, new_file));
    Ok(Output {
        text,
        code: u8::from(unfixed > 0 || found.other_flags > 0),
        note: None,
    })
}
