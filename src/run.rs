//! Glue between the command line and the library: load what a command needs, run it,
//! render in the chosen format, and say which exit code the outcome deserves.

use anyhow::{Context, Result};

use crate::cli::{DiffArgs, ShowArgs};
use crate::diff::DiffOptions;
use crate::load::{InputFile, LoadOptions, StructFilter};
use crate::model::Space;
use crate::report::{Format, diff_markdown, diff_text, json, show_text};
use crate::show::{self, Header};

/// What the binary prints and the exit code it ends with.
pub struct Output {
    pub text: String,
    pub code: u8,
    /// One line for stderr (e.g. "no struct matches").
    pub note: Option<String>,
}

/// `layout-diff show`.
pub fn show(args: &ShowArgs) -> Result<Output> {
    if args.common.format == Format::Markdown {
        anyhow::bail!("show has no Markdown output; use --format text or --format json");
    }
    let file = InputFile::open(&args.file)?;
    let structs = show::globs(&args.structs).context("bad --struct pattern")?;
    let symbols = show::globs(&args.symbols).context("bad --symbol pattern")?;
    let summary_only = args.structs.is_empty() && args.symbols.is_empty() && args.line.is_none();
    let options = LoadOptions {
        line_size: args.common.line_size,
        dwarf: summary_only || !args.structs.is_empty() || !args.symbols.is_empty(),
        structs: if summary_only {
            StructFilter::All
        } else if args.structs.is_empty() {
            StructFilter::None
        } else {
            StructFilter::Matching(structs.clone())
        },
        variables: summary_only || !args.symbols.is_empty(),
        pahole_text: true,
        // Only names spelled out in full, as `pahole -C NAME` takes them.
        typedefs: args
            .structs
            .iter()
            .filter(|p| !p.contains(['*', '?', '[', '{']))
            .cloned()
            .collect(),
    };
    let image = file.load(&options)?;
    if !args.structs.is_empty() && !image.has_debug_info {
        return Err(crate::Error::NoDebugInfo {
            path: args.file.clone(),
        }
        .into());
    }
    let header = Header::of(&image);
    let json = args.common.format == Format::Json;
    let mut text = String::new();
    let mut missing = Vec::new();
    if summary_only {
        let s = show::summary(&image);
        text += &section(json, "layout-diff-summary", &header, "summary", &s, || {
            show_text::summary(&header, &s)
        })?;
    }
    if !args.structs.is_empty() {
        let laid = show::structs(&image, &structs);
        if laid.is_empty() {
            missing.push(format!("no struct matches {}", args.structs.join(", ")));
        }
        text += &section(json, "layout-diff-show", &header, "structs", &laid, || {
            show_text::structs(&header, &laid, args.annotate)
        })?;
    }
    if !args.symbols.is_empty() {
        let views = show::symbols(&image, &symbols);
        if views.is_empty() {
            missing.push(format!("no symbol matches {}", args.symbols.join(", ")));
        }
        text += &section(
            json,
            "layout-diff-symbols",
            &header,
            "symbols",
            &views,
            || show_text::symbols(&header, &views),
        )?;
    }
    if let Some(at) = args.line {
        let space = if args.percpu {
            Space::Percpu
        } else {
            Space::Global
        };
        // Source lines come from addr2line, which reads `.debug_line` only here.
        let lines = match space {
            Space::Global => file.source_lines()?,
            Space::Percpu => None,
        };
        let find = |a: u64| lines.as_ref().and_then(|l| l.find(a));
        let lookup: Option<&show::SourceLookup> = lines.is_some().then_some(&find);
        let view = show::line(&image, space, at, lookup);
        if view.symbols.is_empty() {
            let in_percpu = space == Space::Global
                && image
                    .sections
                    .iter()
                    .find(|s| s.name == ".data..percpu")
                    .is_some_and(|s| at >= s.address && at < s.address.saturating_add(s.size));
            missing.push(if in_percpu {
                format!("nothing on the line at {at:#x}; it is in .data..percpu: per-CPU objects are found by offset, try --percpu")
            } else {
                format!("nothing on the line at {at:#x}")
            });
        }
        text += &section(json, "layout-diff-line", &header, "line", &view, || {
            show_text::line(&header, &view)
        })?;
    }
    Ok(Output {
        text,
        code: if missing.is_empty() { 0 } else { 1 },
        note: (!missing.is_empty()).then(|| missing.join("; ")),
    })
}

/// One part of `show`'s output: a JSON document `{format, version, header..., key:
/// value}` on its own lines, or the text `text` renders.
fn section<T: serde::Serialize>(
    json: bool,
    kind: &str,
    header: &Header,
    key: &str,
    value: &T,
    text: impl FnOnce() -> String,
) -> Result<String> {
    if !json {
        return Ok(text());
    }
    let mut body = serde_json::Map::new();
    body.insert(key.to_string(), serde_json::to_value(value)?);
    let mut out = json::render(kind, header, body)?;
    out.push('\n');
    Ok(out)
}

/// Reads `--hot FILE`: one name or glob per line; blank lines and `#` comments skipped.
fn hot_names(path: &std::path::Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read hot list", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect())
}

/// A spinner on stderr while loading, only when stderr is a terminal.
fn progress(message: &str) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_message(message.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

/// `layout-diff OLD NEW`.
pub fn diff(args: &DiffArgs) -> Result<Output> {
    let mut symbols = args.symbols.clone();
    if let Some(hot) = &args.hot {
        symbols.extend(hot_names(hot)?);
    }
    let options = DiffOptions {
        pinned_symbols: (!symbols.is_empty())
            .then(|| show::globs(&symbols))
            .transpose()
            .context("bad --symbol or --hot pattern")?,
        pinned_structs: (!args.structs.is_empty())
            .then(|| show::globs(&args.structs))
            .transpose()
            .context("bad --struct pattern")?,
    };
    let load = LoadOptions {
        line_size: args.common.line_size,
        pahole_text: false,
        ..LoadOptions::default()
    };
    let timing = std::env::var_os("LAYOUT_DIFF_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let bar = progress("loading both builds");
    let (old_file, new_file) = (InputFile::open(&args.old)?, InputFile::open(&args.new)?);
    let (old, new) = rayon::join(|| old_file.load(&load), || new_file.load(&load));
    let (old, new) = (old?, new?);
    for (img, path) in [(&old, &args.old), (&new, &args.new)] {
        if !img.has_debug_info {
            return Err(crate::Error::NoDebugInfo { path: path.clone() }.into());
        }
    }
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
    let unmatched = unmatched_patterns(args, &symbols, &old, &new)?;
    let t1 = std::time::Instant::now();
    let report = crate::diff::diff(&old, &new, &options);
    let t2 = std::time::Instant::now();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let view = diff_text::View {
        limit: if args.all { None } else { Some(args.limit) },
    };
    let text = match args.common.format {
        Format::Text => diff_text::render(&report, view),
        Format::Markdown => diff_markdown::render(&report, view),
        Format::Json => {
            let mut s = json::document("layout-diff-diff", &report)?;
            s.push('\n');
            s
        }
    };
    if timing {
        eprintln!(
            "layout-diff: load {:.3} s, diff {:.3} s, render {:.3} s",
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            t2.elapsed().as_secs_f64()
        );
    }
    Ok(Output {
        text,
        code: if report.flagged > 0 { 1 } else { 0 },
        note: (!unmatched.is_empty()).then(|| unmatched.join("\nlayout-diff: ")),
    })
}

/// One line for each `--struct` or `--symbol`/`--hot` pattern that names nothing in
/// either build (a typo would otherwise pass silently).
fn unmatched_patterns(
    args: &DiffArgs,
    symbols: &[String],
    old: &crate::model::Image<'_>,
    new: &crate::model::Image<'_>,
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for p in &args.structs {
        let g = globset::Glob::new(p)?.compile_matcher();
        let found = [old, new].iter().any(|img| {
            img.structs
                .iter()
                .any(|s| !s.name.is_empty() && g.is_match(s.name))
        });
        if !found {
            out.push(format!(
                "--struct {p}: no struct of that name in either build"
            ));
        }
    }
    for p in symbols {
        let g = globset::Glob::new(p)?.compile_matcher();
        let found = [old, new].iter().any(|img| {
            img.symbols
                .iter()
                .any(|s| g.is_match(s.name) || g.is_match(s.qualified_name()))
        });
        if !found {
            out.push(format!(
                "--symbol {p}: no symbol of that name in either build"
            ));
        }
    }
    Ok(out)
}
