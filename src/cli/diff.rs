//! `layout-diff OLD NEW`: the evidence read before the builds, the two loads side by
//! side, the diff and its report in every format (shared with `whatif`).

use std::fmt::Write;

use anyhow::{Context, Result};

use super::args::DiffArgs;
use super::{Output, progress, read_evidence};
use layout_diff_core::InputFile;
use layout_diff_core::diff::DiffOptions;
use layout_diff_core::show::{self};
use layout_diff_report::{Format, diff_markdown, diff_text, hot_text, html, json, plan};

/// Lines of items in the default diff report: with the header, summary and closing
/// line, the whole report stays within about 80 lines.
const DEFAULT_LIMIT: usize = 54;

/// Lines of the default text report at most, once every line is fitted to the width.
const MAX_LINES: usize = 80;

/// What the diff reads before the builds: names to show in full, the evidence files
/// (`evidence::gather`, turned into evidence once the builds are loaded), the options.
pub(super) struct Prepared {
    symbols: Vec<String>,
    /// The `--hot`, `--hot-list` and `--kaslr-offset` files and offset, read.
    pub(super) evidence: layout_diff_core::evidence::gather::Read,
    fail_on: Vec<layout_diff_core::diff::Category>,
    /// What two inputs of different kinds are compared on (`load::common_ground`).
    inputs: Vec<String>,
    /// A diff run without `--access`: say that struct lines were not judged.
    no_struct_lines: bool,
}

pub(super) fn prepare(args: &DiffArgs) -> Result<Prepared> {
    // The names of --hot lists are shown in full (and count as measured).
    let evidence = read_evidence(&args.report.evidence)?;
    let mut symbols = args.symbols.clone();
    symbols.extend(evidence.names());
    let fail_on = args
        .report
        .fail_on
        .iter()
        .map(|c| {
            layout_diff_core::diff::Category::parse(c.trim()).with_context(|| {
                format!(
                    "--fail-on: unknown category {c:?} ({})",
                    layout_diff_core::diff::Category::names()
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Prepared {
        symbols,
        evidence,
        fail_on,
        inputs: Vec::new(),
        no_struct_lines: false,
    })
}

pub(super) fn options<'a>(args: &DiffArgs, prep: &Prepared) -> Result<DiffOptions<'a>> {
    let symbols = &prep.symbols;
    let fail_on = prep.fail_on.clone();
    Ok(DiffOptions {
        fail_on: (!fail_on.is_empty()).then_some(fail_on),
        pinned_symbols: (!symbols.is_empty())
            .then(|| show::globs(symbols))
            .transpose()
            .context("bad --symbol or --hot pattern")?,
        pinned_structs: (!args.structs.is_empty())
            .then(|| show::globs(&args.structs))
            .transpose()
            .context("bad --struct pattern")?,
        // JSON and --explain read every change; the other formats list only what the
        // first screen can show unless --all is given.
        listed_only: !args.report.all
            && args.common.format() != Format::Json
            && args.report.explain.is_none(),
        hotness: None,
        old_link: None,
    })
}

/// `layout-diff OLD NEW`.
pub fn diff(args: &DiffArgs) -> Result<Output> {
    let mut prep = prepare(args)?;
    let mut load = super::diff_load_options(&args.common);
    let t0 = std::time::Instant::now();
    let bar = progress("loading both builds");
    // Both files mapped first, so that a missing one fails at once.
    let cache = super::cache::for_command(&args.common)?;
    let opened = InputFile::open_both(&args.old, &args.new)?;
    // The typed access map only when asked for: a snapshot may hold one, a cache entry
    // may, and the report must not depend on either.
    load.typed = args.access;
    let (old_file, new_file) = match args.access {
        true => rayon::join(
            || opened.0.through_cache_for(cache.as_ref(), true),
            || opened.1.through_cache_for(cache.as_ref(), true),
        ),
        false => InputFile::both_through_cache(opened, cache.as_ref()),
    };
    let (old, new, inputs) = super::load_both(&old_file, &new_file, &load)?;
    prep.inputs = inputs;
    prep.no_struct_lines = !args.access;
    if old.line_size != new.line_size {
        anyhow::bail!(
            "{} and {} have different line sizes ({} and {}); give --line-size",
            args.old.display(),
            args.new.display(),
            old.line_size,
            new.line_size
        );
    }
    if let Some(b) = &bar {
        b.set_message("comparing");
    }
    let builds = Builds {
        old: &old,
        new: &new,
        old_link: None,
    };
    let out = compare(
        args,
        prep,
        builds,
        bar,
        (t0, std::time::Instant::now()),
        None,
    );
    // The process ends right after printing: freeing millions of small allocations
    // (members, names) one by one would only cost time, so the loaded builds are left
    // to the exit.
    std::mem::forget((old, new));
    std::mem::forget((old_file, new_file));
    out
}

/// What a prediction says of itself, printed before its report.
pub(super) struct Preface {
    pub(super) text: String,
    pub(super) json: serde_json::Value,
}

/// The two builds a diff compares, and OLD's link model when the caller built it.
pub(super) struct Builds<'x, 'd> {
    pub(super) old: &'x layout_diff_core::model::Image<'d>,
    pub(super) new: &'x layout_diff_core::model::Image<'d>,
    pub(super) old_link: Option<&'x layout_diff_core::link::LinkMap<'d>>,
}

/// The diff of two loaded builds, rendered; `preface` goes before the report
/// (text and markdown) or beside it (JSON).
pub(super) fn compare(
    args: &DiffArgs,
    prep: Prepared,
    builds: Builds<'_, '_>,
    bar: Option<indicatif::ProgressBar>,
    (t0, t1): (std::time::Instant, std::time::Instant),
    preface: Option<&Preface>,
) -> Result<Output> {
    let timing = std::env::var_os("LAYOUT_DIFF_TIMING").is_some();
    let Builds { old, new, old_link } = builds;
    let mut options = options(args, &prep)?;
    options.old_link = old_link;
    let Prepared {
        symbols,
        evidence,
        mut inputs,
        no_struct_lines,
        ..
    } = prep;
    let unmatched = show::unmatched_patterns(&args.structs, &symbols, &[old, new])?;
    let gathered = layout_diff_core::evidence::gather(evidence, old, Some(new))?;
    // The first c2c report's hot lines, followed into NEW.
    let follow = gathered
        .maps
        .first()
        .map(|(_, map)| layout_diff_core::perf::hotmap::follow(map, new));
    options.hotness = Some(&gathered.hotness);
    let mut report = layout_diff_core::diff::diff(old, new, &options);
    if no_struct_lines && report.summary.structs.changed > 0 {
        inputs.push(format!(
            "the lines of the {} changed structs are not judged by who shares them: --access",
            report.summary.structs.changed
        ));
    }
    report.inputs = inputs;
    report.hot_files = gathered.files;
    if let Some(name) = &args.report.explain {
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        return explained(&report, name, (old, new));
    }
    let t2 = std::time::Instant::now();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let text = render(args, &report, preface, follow.as_ref())?;
    if timing {
        eprintln!(
            "layout-diff: load {:.3} s, diff {:.3} s, render {:.3} s",
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            t2.elapsed().as_secs_f64()
        );
    }
    let code = u8::from(report.failing > 0);
    // The process ends right after printing: freeing millions of small allocations
    // (members, names) one by one would only cost time, so the loaded builds and the
    // report are left to the exit.
    std::mem::forget(report);
    std::mem::forget(follow);
    Ok(Output {
        text,
        code,
        note: (!unmatched.is_empty()).then(|| unmatched.join("\nlayout-diff: ")),
    })
}

/// `--explain NAME`: the explanation of that change, or exit code 1 and a note when
/// nothing of that name changed. Each shared line names every member of every object
/// on it, read from the two builds.
fn explained(
    report: &layout_diff_core::diff::Report<'_>,
    name: &str,
    (old, new): (
        &layout_diff_core::model::Image<'_>,
        &layout_diff_core::model::Image<'_>,
    ),
) -> Result<Output> {
    use layout_diff_report::explain::Build;
    let members = |build: Build,
                   space: layout_diff_core::model::Space,
                   t: &layout_diff_core::diff::lines::LineTenant<'_>| {
        let image = match build {
            Build::Old => old,
            Build::New => new,
        };
        image
            .symbols
            .iter()
            .find(|s| {
                s.place == t.place
                    && s.space == space
                    && s.kind != layout_diff_core::model::SymbolKind::Function
                    && layout_diff_core::diff::SymbolName::of(s) == t.name
            })
            .map(|s| show::members_on(image, s, (t.from, t.to)))
            .unwrap_or_default()
    };
    let mut text = String::new();
    let found = layout_diff_report::explain::explain(&mut text, report, name, Some(&members))?;
    Ok(if found {
        Output {
            text,
            code: 0,
            note: None,
        }
    } else {
        Output {
            text: String::new(),
            code: 1,
            note: Some(format!(
                "--explain {name}: no change of an object, struct or function of that name"
            )),
        }
    })
}

/// The report in the chosen format, with the preface and the c2c lines followed
/// into NEW.
fn render(
    args: &DiffArgs,
    report: &layout_diff_core::diff::Report<'_>,
    preface: Option<&Preface>,
    follow: Option<&layout_diff_core::perf::hotmap::HotFollow>,
) -> Result<String> {
    let view = plan::View {
        limit: if args.report.all {
            None
        } else {
            Some(args.report.limit.unwrap_or(DEFAULT_LIMIT))
        },
        compact: false,
        bare: false,
    };
    let planned = plan::plan(report, view);
    let mut text = String::new();
    match args.common.format() {
        Format::Text => {
            if let Some(p) = preface {
                text.push_str(&p.text);
            }
            // The default view fits a terminal: at most MAX_LINES lines (an explicit
            // --limit is kept as given), every line at most 100 columns.
            let max = args.report.limit.is_none().then_some(MAX_LINES);
            let fitted = diff_text::render_fitted(report, view, max)?;
            text.push_str(&fitted);
        }
        Format::Markdown => {
            if let Some(p) = preface {
                for l in p.text.lines() {
                    writeln!(text, "> {l}")?;
                }
                text.push('\n');
            }
            diff_markdown::render(&mut text, &planned)?;
        }
        Format::Html => {
            let hot = follow
                .map(|f| layout_diff_report::string(|o| hot_text::follow(o, f)))
                .transpose()?;
            let side = hot.as_deref().map(|t| ("hot lines from perf c2c", t));
            html::diff(
                &mut text,
                &planned,
                preface.map(|p| p.text.trim_end()),
                side,
            )?;
        }
        Format::Json => {
            #[derive(serde::Serialize)]
            struct WithHot<'a> {
                #[serde(flatten)]
                report: &'a layout_diff_core::diff::Report<'a>,
                #[serde(skip_serializing_if = "Option::is_none")]
                hot: Option<&'a layout_diff_core::perf::hotmap::HotFollow>,
                #[serde(skip_serializing_if = "Option::is_none")]
                prediction: Option<&'a serde_json::Value>,
            }
            let doc = WithHot {
                report,
                hot: follow,
                prediction: preface.map(|p| &p.json),
            };
            text = json::document("layout-diff-diff", &doc)?;
            text.push('\n');
        }
    }
    if let Some(f) = follow {
        match args.common.format() {
            Format::Text => hot_text::follow(&mut text, f)?,
            Format::Markdown => {
                text.push_str("\n```\n");
                hot_text::follow(&mut text, f)?;
                text.push_str("```\n");
            }
            Format::Json | Format::Html => {}
        }
    }
    Ok(text)
}
