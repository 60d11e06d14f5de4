//! `layout-diff check`: a rules file evaluated on one build, or on NEW against OLD.

use anyhow::{Context, Result};

use super::args::CheckArgs;
use super::{Output, progress};
use layout_diff_core::InputFile;
use layout_diff_core::load::{LoadOptions, StructFilter};
use layout_diff_core::show::{self};
use layout_diff_report::{Format, check_markdown, check_text, html, json, string};

/// `layout-diff check --rules FILE IMAGE` or `... OLD NEW`: loads only the structs the
/// rules name (and symbols, which the ELF gives), evaluates, renders.
pub fn check(args: &CheckArgs) -> Result<Output> {
    let rules = layout_diff_core::check::rules::load(&args.rules)?;
    let (old_path, new_path) = match args.files.as_slice() {
        [image] => (None, image),
        [old, new] => (Some(old), new),
        _ => anyhow::bail!("check takes IMAGE or OLD NEW"),
    };
    if old_path.is_none() && rules.needs_old() {
        let line = rules
            .structs
            .iter()
            .find(|r| r.rule.max_growth.is_some())
            .map_or(0, |r| r.line);
        anyhow::bail!(
            "{}:{line}: key `max_growth` needs the old build: check --rules FILE OLD NEW",
            args.rules.display()
        );
    }
    let options = check_options(args, &rules)?;
    let new_file = InputFile::open(new_path)?;
    let old_file = old_path.map(|p| InputFile::open(p)).transpose()?;
    // OLD is read only for growth rules (the others are about NEW).
    let old_file = old_file.filter(|_| rules.needs_old());
    let cache = super::cache::for_command(&args.common)?;
    let (new_file, old_file) = rayon::join(
        || new_file.through_cache(cache.as_ref()),
        || old_file.map(|f| f.through_cache(cache.as_ref())),
    );
    let bar = progress(match old_file {
        Some(_) => "loading both builds",
        None => "loading the build",
    });
    let (new, old) = rayon::join(
        || new_file.load(&options),
        || old_file.as_ref().map(|f| f.load(&options)).transpose(),
    );
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let (new, old) = (new?, old?);
    for img in std::iter::once(&new).chain(old.as_ref()) {
        if options.dwarf && !img.has_debug_info {
            return Err(layout_diff_core::Error::NoDebugInfo {
                path: img.path.clone(),
            }
            .into());
        }
    }
    let report = layout_diff_core::check::eval::check(&rules, &new, old.as_ref());
    let text = match args.common.format() {
        Format::Text => string(|o| check_text::render(o, &report))?,
        Format::Markdown => string(|o| check_markdown::render(o, &report))?,
        Format::Html => string(|o| html::check(o, &report))?,
        Format::Json => {
            let mut s = json::document("layout-diff-check", &report)?;
            s.push('\n');
            s
        }
    };
    Ok(Output {
        text,
        code: if report.failed > 0 { 1 } else { 0 },
        note: None,
    })
}

/// What `check` reads of the builds: the structs the rules name, no variables.
fn check_options(
    args: &CheckArgs,
    rules: &layout_diff_core::check::rules::Rules,
) -> Result<LoadOptions> {
    let patterns = rules.struct_patterns();
    Ok(LoadOptions {
        line_size: args.common.line_size,
        rust: args.common.rust(),
        dwarf: !patterns.is_empty(),
        structs: if patterns.is_empty() {
            StructFilter::None
        } else if patterns
            .iter()
            .all(|p| !p.contains(['*', '?', '[', '{', '\\']))
        {
            // Plain names: found without decoding every unit, as `show --struct NAME`
            // finds them (`load::lookup`).
            StructFilter::Named(patterns.clone())
        } else {
            StructFilter::Matching(show::globs(&patterns).context("bad struct name in rules")?)
        },
        variables: false,
        variables_for: Vec::new(),
        ..LoadOptions::default()
    })
}
