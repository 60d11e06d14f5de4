//! `layout-diff suggest`: fixes for flagged changes (OLD NEW) or failing rules (one
//! IMAGE), each checked by a prediction.

use anyhow::Result;

use super::args::{DiffArgs, ReportArgs, SuggestArgs};
use super::diff::{options, prepare};
use super::{Output, progress};
use layout_diff_core::InputFile;
use layout_diff_core::suggest::Suggestions;
use layout_diff_report::{Format, json};

/// `layout-diff suggest OLD NEW`: fixes for the flagged hot objects, each checked by
/// a prediction on NEW diffed against OLD.
pub fn suggest(args: &SuggestArgs) -> Result<Output> {
    let Some(new_path) = &args.new else {
        return one_image(args);
    };
    if args.rules.is_some() {
        anyhow::bail!("--rules is for one build: suggest IMAGE --rules FILE");
    }
    let diff_args = DiffArgs {
        old: args.old.clone(),
        new: new_path.clone(),
        symbols: args.symbols.clone(),
        structs: Vec::new(),
        access: false,
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
    let cache = super::cache::for_command(&args.common)?;
    let opened = InputFile::open_both(&args.old, new_path)?;
    let (old_file, new_file) = InputFile::both_through_cache(opened, cache.as_ref());
    let (old, new, _) = super::load_both(&old_file, &new_file, &load)?;
    if let Some(b) = &bar {
        b.set_message("predicting fixes");
    }
    let mut options = options(&diff_args, &prep)?;
    options.listed_only = true;
    let gathered = layout_diff_core::evidence::gather(prep.evidence, &old, Some(&new))?;
    options.hotness = Some(&gathered.hotness);
    let mut found = layout_diff_core::suggest::suggest(&old, &new, &options, &args.symbols);
    found.hot_files = gathered.files;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let unfixed = unfixed(&found);
    let text = match args.common.format() {
        Format::Json => document(&found)?,
        Format::Markdown => layout_diff_report::string(|o| {
            layout_diff_report::suggest_markdown::render(o, &found, &args.old, new_path)
        })?,
        Format::Html => layout_diff_report::string(|o| {
            let doc = layout_diff_report::suggest_doc::of_pair(&found, &args.old, new_path);
            layout_diff_report::html::suggest(o, &doc)
        })?,
        Format::Text => layout_diff_report::string(|o| {
            layout_diff_report::suggest_text::render(o, &found, &args.old, new_path)
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

fn document(found: &Suggestions) -> Result<String> {
    let mut s = json::document("layout-diff-suggest", found)?;
    s.push('\n');
    Ok(s)
}

/// Flagged changes or failing rules without a fix that restores (passes).
fn unfixed(found: &Suggestions) -> usize {
    fn none(mut restores: impl Iterator<Item = bool>) -> bool {
        !restores.any(|r| r)
    }
    let objects = found
        .suggestions
        .iter()
        .filter(|s| none(s.fixes.iter().map(|f| f.restores)));
    let members = found
        .members
        .iter()
        .filter(|s| none(s.fixes.iter().map(|f| f.restores)));
    let functions = found
        .functions
        .iter()
        .filter(|s| none(s.fixes.iter().map(|f| f.restores || f.no_more_lines)));
    let groups = found
        .groups
        .iter()
        .filter(|s| none(s.fixes.iter().map(|f| f.restores)));
    let rules = found
        .rules
        .iter()
        .filter(|s| none(s.fixes.iter().map(|f| f.passes)));
    objects.count() + members.count() + functions.count() + groups.count() + rules.count()
}

/// `layout-diff suggest IMAGE --rules FILE` or `--hot FILE`: fixes for the failing
/// placement rules, or for measured-hot written objects sharing a line with written
/// objects.
fn one_image(args: &SuggestArgs) -> Result<Output> {
    let rules = args
        .rules
        .as_ref()
        .map(|p| layout_diff_core::check::rules::load(p))
        .transpose()?;
    if rules.is_none() && args.evidence.hot.is_empty() {
        anyhow::bail!("suggest on one build needs --rules FILE or --hot FILE (or give OLD NEW)");
    }
    let evidence = super::read_evidence(&args.evidence)?;
    let load = super::diff_load_options(&args.common);
    let bar = progress("loading the build");
    let cache = super::cache::for_command(&args.common)?;
    let file = InputFile::open(&args.old)?.through_cache(cache.as_ref());
    let image = file.load(&load)?;
    if !image.has_debug_info {
        return Err(layout_diff_core::Error::NoDebugInfo {
            path: image.path.clone(),
        }
        .into());
    }
    let gathered = layout_diff_core::evidence::gather(evidence, &image, None)?;
    let hotness = gathered.hotness;
    if let Some(b) = &bar {
        b.set_message("predicting fixes");
    }
    let (rules, made) = match rules {
        Some(r) => (r, false),
        None => (
            layout_diff_core::suggest::image::hot_rules(&image, &hotness),
            true,
        ),
    };
    let found = Suggestions {
        suggestions: Vec::new(),
        members: Vec::new(),
        functions: Vec::new(),
        groups: Vec::new(),
        rules: layout_diff_core::suggest::image::suggest_rules(
            &image,
            &rules,
            made,
            Some(&hotness),
        ),
        other_flags: 0,
        hot_files: gathered.files,
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let unfixed = unfixed(&found);
    let text = render_image(args, &found)?;
    std::mem::forget(image);
    std::mem::forget(file);
    Ok(Output {
        text,
        code: u8::from(unfixed > 0),
        note: None,
    })
}

/// The suggestions on one build in the chosen format.
fn render_image(args: &SuggestArgs, found: &Suggestions) -> Result<String> {
    let from = match &args.rules {
        Some(p) => format!("rules {}", p.display()),
        None => "measured-hot objects sharing a line with written objects".to_string(),
    };
    Ok(match args.common.format() {
        Format::Json => document(found)?,
        Format::Markdown => layout_diff_report::string(|o| {
            layout_diff_report::suggest_markdown::render_image(o, found, &args.old, &from)
        })?,
        Format::Html => layout_diff_report::string(|o| {
            let doc = layout_diff_report::suggest_doc::of_image(found, &args.old, &from);
            layout_diff_report::html::suggest(o, &doc)
        })?,
        Format::Text => layout_diff_report::string(|o| {
            layout_diff_report::suggest_text::render_image(o, found, &args.old, &from)
        })?,
    })
}
