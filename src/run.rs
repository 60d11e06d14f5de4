//! Glue between the command line and the library: load what a command needs, run it,
//! render in the chosen format, and say which exit code the outcome deserves.

use anyhow::{Context, Result};

use crate::cli::{CheckArgs, DiffArgs, ShowArgs, SuggestArgs, WhatifArgs};
use layout_diff::diff::DiffOptions;
use layout_diff::load::{InputFile, LoadOptions, StructFilter};
use layout_diff::model::Space;
use layout_diff::perf::HotInput;
use layout_diff::report::{
    Format, check_markdown, check_text, diff_markdown, diff_text, hot_text, html, json, plan,
    show_text,
};
use layout_diff::show::{self, Header};

/// What the binary prints and the exit code it ends with.
pub struct Output {
    pub text: String,
    pub code: u8,
    /// One line for stderr (e.g. "no struct matches").
    pub note: Option<String>,
}

/// Lines of items in the default diff report: with the header, summary and closing
/// line, the whole report stays within about 80 lines.
const DEFAULT_LIMIT: usize = 54;

/// Characters that make a `--struct` pattern a glob rather than a plain name.
const GLOB_CHARS: [char; 5] = ['*', '?', '[', '{', '\\'];

/// `layout-diff show`.
pub fn show(args: &ShowArgs) -> Result<Output> {
    if args.common.format() == Format::Markdown {
        anyhow::bail!("show has no Markdown output; use --format text or --format json");
    }
    let mut file = InputFile::open(&args.file)?;
    if let Some(list) = &args.symbol_list {
        file = file.with_symbols(list)?;
    }
    let hot = args.hot.as_deref().map(read_hot).transpose()?;
    let mut symbol_args = args.symbols.clone();
    if let Some(HotInput::Names(names)) = &hot {
        symbol_args.extend(names.iter().cloned());
    }
    if args.annotate && args.structs.is_empty() {
        anyhow::bail!("--annotate annotates --struct layouts; give --struct NAME");
    }
    if args.kaslr_offset.is_some() && !matches!(hot, Some(HotInput::C2c(_))) {
        anyhow::bail!("--kaslr-offset applies to a perf c2c report given with --hot");
    }
    let (c2c, profile) = match hot {
        Some(HotInput::C2c(r)) => (Some(r), None),
        Some(HotInput::Profile(m)) => (None, Some(m)),
        _ => (None, None),
    };
    let structs = show::globs(&args.structs).context("bad --struct pattern")?;
    let symbols = show::globs(&symbol_args).context("bad --symbol pattern")?;
    let summary_only = args.structs.is_empty()
        && symbol_args.is_empty()
        && args.line.is_none()
        && c2c.is_none()
        && profile.is_none();
    let html = args.common.format() == Format::Html;
    if html && (summary_only || args.line.is_some() || c2c.is_some()) {
        anyhow::bail!(
            "show --format html draws --struct and --symbol; use --format text or json for the summary, --line and a perf c2c --hot"
        );
    }
    let options = LoadOptions {
        line_size: args.common.line_size,
        rust: args.common.rust(),
        dwarf: summary_only
            || !args.structs.is_empty()
            || !symbol_args.is_empty()
            || c2c.is_some()
            || profile.is_some(),
        structs: if summary_only {
            StructFilter::All
        } else if let (true, Some(m)) = (args.structs.is_empty(), &profile) {
            // The profile's types, found by name as `--struct NAME` finds them.
            StructFilter::Named(m.types().iter().map(|(t, _)| t.to_string()).collect())
        } else if args.structs.is_empty() {
            StructFilter::None
        } else if args.structs.iter().all(|p| !p.contains(GLOB_CHARS)) {
            // Plain names: found without decoding every unit (`load::lookup`).
            StructFilter::Named(args.structs.clone())
        } else {
            StructFilter::Matching(structs.clone())
        },
        variables: summary_only || !symbol_args.is_empty() || c2c.is_some() || profile.is_some(),
        pahole_text: true,
        // Only names spelled out in full, as `pahole -C NAME` takes them.
        typedefs: args
            .structs
            .iter()
            .filter(|p| !p.contains(GLOB_CHARS))
            .cloned()
            .collect(),
        all_typedefs: false,
    };
    let bar = progress(&format!("loading {}", args.file.display()));
    let image = file.load(&options);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let image = image?;
    if !args.structs.is_empty() && !image.has_debug_info {
        return Err(layout_diff::Error::NoDebugInfo {
            path: args.file.clone(),
        }
        .into());
    }
    let header = Header::of(&image);
    if html {
        return Ok(show_html(
            args,
            &image,
            &header,
            &structs,
            &symbols,
            &symbol_args,
        ));
    }
    let json = args.common.format() == Format::Json;
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
    if !symbol_args.is_empty() {
        let views = show::symbols(&image, &symbols);
        if views.is_empty() {
            missing.push(format!("no symbol matches {}", symbol_args.join(", ")));
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
    let mut snapshot_lines = false;
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
        snapshot_lines = lines.is_some();
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
    if let (Some(report), Some(path)) = (&c2c, &args.hot) {
        let kaslr = kaslr_for(report, &image, args.kaslr_offset, path)?;
        let map = layout_diff::perf::hotmap::map(report, &image, kaslr);
        text += &section(json, "layout-diff-hot", &header, "hot", &map, || {
            hot_text::show(&header, &map)
        })?;
    }
    if let Some(m) = &profile {
        let (types, objects) = show::hot_types(&image, m);
        if types.is_empty() && objects.is_empty() {
            missing.push("no type or object of the perf profile is in this image".to_string());
        }
        #[derive(serde::Serialize)]
        struct HotTypes<'a> {
            types: &'a [show::HotTypeView],
            objects: &'a [show::HotObjectView],
        }
        let doc = HotTypes {
            types: &types,
            objects: &objects,
        };
        text += &section(json, "layout-diff-hot-types", &header, "hot", &doc, || {
            hot_text::types(&header, &types, &objects)
        })?;
    }
    let code = if missing.is_empty() { 0 } else { 1 };
    if args.line.is_some() && !args.percpu && file.is_snapshot() && !snapshot_lines {
        missing.push(format!(
            "{}: a snapshot keeps no source lines; give the vmlinux for them",
            args.file.display()
        ));
    }
    Ok(Output {
        text,
        code,
        note: (!missing.is_empty()).then(|| missing.join("; ")),
    })
}

/// `show --struct`/`--symbol --format html`: one page with every match.
fn show_html(
    args: &ShowArgs,
    image: &layout_diff::Image<'_>,
    header: &Header,
    structs: &globset::GlobSet,
    symbols: &globset::GlobSet,
    symbol_args: &[String],
) -> Output {
    let mut missing = Vec::new();
    let laid = if args.structs.is_empty() {
        Vec::new()
    } else {
        show::structs(image, structs)
    };
    if !args.structs.is_empty() && laid.is_empty() {
        missing.push(format!("no struct matches {}", args.structs.join(", ")));
    }
    let views = if symbol_args.is_empty() {
        Vec::new()
    } else {
        show::symbols(image, symbols)
    };
    if !symbol_args.is_empty() && views.is_empty() {
        missing.push(format!("no symbol matches {}", symbol_args.join(", ")));
    }
    Output {
        text: html::show(header, &laid, &views),
        code: u8::from(!missing.is_empty()),
        note: (!missing.is_empty()).then(|| missing.join("; ")),
    }
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

/// Reads `--hot FILE`: a perf c2c report or profile (recognised by its header words),
/// else one name, glob or `sym+0xOFF` per line.
fn read_hot(path: &std::path::Path) -> Result<HotInput> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read hot list", path.display()))?;
    layout_diff::perf::read(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The names of a `--hot` list (none for a perf report, which is read as evidence).
pub(crate) fn hot_names(path: &std::path::Path) -> Result<Vec<String>> {
    Ok(match read_hot(path)? {
        HotInput::Names(names) => names,
        HotInput::C2c(_) | HotInput::Profile(_) => Vec::new(),
    })
}

/// The built-in known list with every `--hot-list` file added.
fn known_list(paths: &[std::path::PathBuf]) -> Result<layout_diff::evidence::KnownList> {
    let mut list = layout_diff::evidence::KnownList::builtin();
    for p in paths {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("{}: cannot read hot list", p.display()))?;
        let more = layout_diff::evidence::KnownList::parse(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
        list.extend(more);
    }
    Ok(list)
}

/// The KASLR offset for a c2c report: `--kaslr-offset`, else inferred from `image`.
fn kaslr_for(
    report: &layout_diff::perf::c2c::C2cReport,
    image: &layout_diff::Image<'_>,
    given: Option<u64>,
    path: &std::path::Path,
) -> Result<layout_diff::perf::hotmap::Kaslr> {
    match given {
        Some(offset) => Ok(layout_diff::perf::hotmap::Kaslr::Given { offset }),
        None => layout_diff::perf::hotmap::infer_kaslr(report, image)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display())),
    }
}

/// A spinner on stderr while loading, only when stderr is a terminal.
/// Finishes opening `file` (a snapshot is checked and decompressed) and loads it.
fn open_and_load<'c>(
    file: &'c mut InputFile,
    load: &LoadOptions,
) -> layout_diff::Result<layout_diff::model::Image<'c>> {
    file.open_snapshot()?;
    let file: &'c InputFile = file;
    file.load(load)
}

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

/// What the diff reads before the builds: names to show in full, evidence of
/// hotness, c2c reports to map once OLD is loaded, the options.
struct Prepared {
    symbols: Vec<String>,
    hotness: layout_diff::evidence::Hotness,
    c2c: Vec<(layout_diff::perf::c2c::C2cReport, std::path::PathBuf)>,
    fail_on: Vec<layout_diff::diff::Category>,
}

fn prepare(args: &DiffArgs) -> Result<Prepared> {
    let mut symbols = args.symbols.clone();
    // Every --hot file: names are shown in full and count as measured; perf profiles
    // are measured evidence; c2c reports are mapped onto OLD once it is loaded.
    let mut hotness = layout_diff::evidence::Hotness {
        known: known_list(&args.hot_list)?,
        measured: layout_diff::evidence::Measured::default(),
    };
    let mut c2c = Vec::new();
    for path in &args.hot {
        match read_hot(path)? {
            HotInput::Names(names) => {
                for n in names.iter().filter(|n| layout_diff::perf::is_plain_name(n)) {
                    let from = format!("named in {}", path.display());
                    hotness.measured.add_object(n, "--hot list", from.clone());
                    hotness.measured.add_function(n, "--hot list", from);
                }
                symbols.extend(names);
            }
            HotInput::Profile(m) => hotness.measured.extend(m),
            HotInput::C2c(r) => c2c.push((r, path.clone())),
        }
    }
    if args.kaslr_offset.is_some() && c2c.is_empty() {
        anyhow::bail!("--kaslr-offset applies to a perf c2c report given with --hot");
    }
    let fail_on = args
        .fail_on
        .iter()
        .map(|c| {
            layout_diff::diff::Category::parse(c.trim()).with_context(|| {
                format!(
                    "--fail-on: unknown category {c:?} ({})",
                    layout_diff::diff::Category::names()
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Prepared {
        symbols,
        hotness,
        c2c,
        fail_on,
    })
}

fn options<'a>(args: &DiffArgs, prep: &Prepared) -> Result<DiffOptions<'a>> {
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
        listed_only: !args.all && args.common.format() != Format::Json && args.explain.is_none(),
        hotness: None,
    })
}

/// `layout-diff OLD NEW`.
pub fn diff(args: &DiffArgs) -> Result<Output> {
    let prep = prepare(args)?;
    let load = LoadOptions {
        line_size: args.common.line_size,
        rust: args.common.rust(),
        pahole_text: false,
        ..LoadOptions::default()
    };
    let t0 = std::time::Instant::now();
    let bar = progress("loading both builds");
    // Both files mapped first, so that a missing one fails at once; then each build
    // is opened (a snapshot checked and decompressed) and loaded by one task, the two
    // side by side: one hand-off to the second thread, not one for opening and
    // another for loading.
    let (mut old_file, mut new_file) = (InputFile::map(&args.old)?, InputFile::map(&args.new)?);
    let (old, new) = rayon::join(
        || open_and_load(&mut old_file, &load),
        || open_and_load(&mut new_file, &load),
    );
    let (mut old, mut new) = (old?, new?);
    layout_diff::load::align_local_names(&mut old, &mut new);
    for (img, path) in [(&old, &args.old), (&new, &args.new)] {
        if !img.has_debug_info {
            return Err(layout_diff::Error::NoDebugInfo { path: path.clone() }.into());
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
    let out = compare(
        args,
        prep,
        &old,
        &new,
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
struct Preface {
    text: String,
    json: serde_json::Value,
}

/// `layout-diff whatif IMAGE CHANGES`: the build laid out again with the changes,
/// diffed against it like a real new build.
pub fn whatif(args: &WhatifArgs) -> Result<Output> {
    // With object files, a change may be given by them alone.
    let changes = match layout_diff::whatif::parse_changes(std::env::args()) {
        Err(_) if !args.objects.is_empty() => Vec::new(),
        other => other.map_err(anyhow::Error::msg)?,
    };
    let objects = args
        .objects
        .iter()
        .map(|p| layout_diff::whatif::objects::ObjectFile::read(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    let diff_args = DiffArgs {
        old: args.file.clone(),
        new: args.file.clone(),
        all: args.all,
        limit: args.limit,
        kaslr_offset: None,
        symbols: Vec::new(),
        structs: Vec::new(),
        hot: args.hot.clone(),
        hot_list: args.hot_list.clone(),
        explain: args.explain.clone(),
        fail_on: args.fail_on.clone(),
        common: args.common.clone(),
    };
    let prep = prepare(&diff_args)?;
    let load = LoadOptions {
        line_size: args.common.line_size,
        rust: args.common.rust(),
        pahole_text: false,
        ..LoadOptions::default()
    };
    let t0 = std::time::Instant::now();
    let bar = progress("loading the build");
    let mut file = InputFile::map(&args.file)?;
    let image = open_and_load(&mut file, &load)?;
    if !image.has_debug_info {
        return Err(layout_diff::Error::NoDebugInfo {
            path: args.file.clone(),
        }
        .into());
    }
    let p = layout_diff::whatif::predict(&image, &changes, &objects)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    if args.nm {
        let mut text = String::new();
        for s in &p.image.symbols {
            let kind = match s.kind {
                layout_diff::model::SymbolKind::Function => 't',
                _ => 'd',
            };
            text += &format!("{:016x} {:016x} {kind} {}\n", s.address, s.size, s.name);
        }
        return Ok(Output {
            text,
            code: 0,
            note: None,
        });
    }
    let mut described: Vec<String> = p.changes.iter().map(ToString::to_string).collect();
    described.extend(
        objects
            .iter()
            .map(|o| format!("{} recompiled", o.path.display())),
    );
    let mut text = format!(
        "Predicted, not built: {}\n  link model: {} data objects and {} functions; the build laid out again unchanged puts {} and {} of them back at their addresses\n  {} predicted to move or change size\n",
        described.join(", "),
        p.objects,
        p.functions,
        p.reproduced,
        p.functions_reproduced,
        p.moved
    );
    for c in &p.caveats {
        text += &format!("  not predicted: {c}\n");
    }
    text.push('\n');
    let preface = Preface {
        text,
        json: serde_json::json!({
            "predicted": true,
            "changes": described,
            "objects": p.objects,
            "reproduced": p.reproduced,
            "functions": p.functions,
            "functions_reproduced": p.functions_reproduced,
            "moved": p.moved,
            "not_predicted": p.caveats,
        }),
    };
    let out = compare(
        &diff_args,
        prep,
        &image,
        &p.image,
        bar,
        (t0, std::time::Instant::now()),
        Some(&preface),
    );
    std::mem::forget((p, image));
    std::mem::forget(file);
    out
}

/// `layout-diff suggest OLD NEW`: fixes for the flagged hot objects, each checked by
/// a prediction on NEW diffed against OLD.
pub fn suggest(args: &SuggestArgs) -> Result<Output> {
    let diff_args = DiffArgs {
        old: args.old.clone(),
        new: args.new.clone(),
        all: true,
        limit: None,
        kaslr_offset: None,
        symbols: args.symbols.clone(),
        structs: Vec::new(),
        hot: args.hot.clone(),
        hot_list: args.hot_list.clone(),
        explain: None,
        fail_on: Vec::new(),
        common: args.common.clone(),
    };
    let prep = prepare(&diff_args)?;
    let load = LoadOptions {
        line_size: args.common.line_size,
        rust: args.common.rust(),
        pahole_text: false,
        ..LoadOptions::default()
    };
    let bar = progress("loading both builds");
    let (mut old_file, mut new_file) = (InputFile::map(&args.old)?, InputFile::map(&args.new)?);
    let (old, new) = rayon::join(
        || open_and_load(&mut old_file, &load),
        || open_and_load(&mut new_file, &load),
    );
    let (mut old, mut new) = (old?, new?);
    layout_diff::load::align_local_names(&mut old, &mut new);
    for (img, path) in [(&old, &args.old), (&new, &args.new)] {
        if !img.has_debug_info {
            return Err(layout_diff::Error::NoDebugInfo { path: path.clone() }.into());
        }
    }
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
        .iter()
        .filter(|s| !s.fixes.iter().any(|f| f.restores))
        .count();
    let text = match args.common.format() {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Doc<'a> {
                suggestions: &'a [layout_diff::suggest::Suggestion],
            }
            let mut s = json::document(
                "layout-diff-suggest",
                &Doc {
                    suggestions: &found,
                },
            )?;
            s.push('\n');
            s
        }
        _ => layout_diff::report::suggest_text::render(&found, &args.old, &args.new),
    };
    std::mem::forget((old, new));
    std::mem::forget((old_file, new_file));
    Ok(Output {
        text,
        code: u8::from(unfixed > 0),
        note: None,
    })
}

/// The diff of two loaded builds, rendered; `preface` goes before the report
/// (text and markdown) or beside it (JSON).
fn compare(
    args: &DiffArgs,
    prep: Prepared,
    old: &layout_diff::model::Image<'_>,
    new: &layout_diff::model::Image<'_>,
    bar: Option<indicatif::ProgressBar>,
    (t0, t1): (std::time::Instant, std::time::Instant),
    preface: Option<&Preface>,
) -> Result<Output> {
    let timing = std::env::var_os("LAYOUT_DIFF_TIMING").is_some();
    let mut options = options(args, &prep)?;
    let Prepared {
        symbols,
        mut hotness,
        c2c,
        ..
    } = prep;
    let unmatched = unmatched_patterns(args, &symbols, old, new)?;
    // A c2c report recorded on OLD: the objects on its hot lines are measured hot, and
    // its lines are followed into NEW.
    let mut follow = None;
    for (r, path) in &c2c {
        let kaslr = kaslr_for(r, old, args.kaslr_offset, path)?;
        let map = layout_diff::perf::hotmap::map(r, old, kaslr);
        for line in &map.lines {
            for o in &line.objects {
                let bare = o.name.rsplit(':').next().unwrap_or(&o.name);
                hotness.measured.add_object(
                    bare,
                    "perf c2c",
                    format!("hot line #{} ({} HITM)", line.index, line.hitm),
                );
            }
        }
        follow.get_or_insert_with(|| layout_diff::perf::hotmap::follow(&map, new));
    }
    options.hotness = Some(&hotness);
    let report = layout_diff::diff::diff(old, new, &options);
    if let Some(name) = &args.explain {
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        let found = layout_diff::report::explain::explain(&report, name);
        return Ok(match found {
            Some(text) => Output {
                text,
                code: 0,
                note: None,
            },
            None => Output {
                text: String::new(),
                code: 1,
                note: Some(format!(
                    "--explain {name}: no change of an object, struct or function of that name"
                )),
            },
        });
    }
    let t2 = std::time::Instant::now();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let view = plan::View {
        limit: if args.all {
            None
        } else {
            Some(args.limit.unwrap_or(DEFAULT_LIMIT))
        },
    };
    let planned = plan::plan(&report, view);
    let mut text = match args.common.format() {
        Format::Text => {
            preface.map_or(String::new(), |p| p.text.clone()) + &diff_text::render(&planned)
        }
        Format::Markdown => {
            let quoted = preface.map_or(String::new(), |p| {
                p.text
                    .lines()
                    .map(|l| format!("> {l}\n"))
                    .collect::<String>()
                    + "\n"
            });
            quoted + &diff_markdown::render(&planned)
        }
        Format::Html => {
            let hot = follow.as_ref().map(hot_text::follow);
            let side = match (preface, hot.as_deref()) {
                (_, Some(t)) => Some(("hot lines from perf c2c", t)),
                (Some(p), None) => Some(("predicted, not built", p.text.as_str())),
                (None, None) => None,
            };
            html::diff(&planned, side)
        }
        Format::Json => {
            #[derive(serde::Serialize)]
            struct WithHot<'a> {
                #[serde(flatten)]
                report: &'a layout_diff::diff::Report<'a>,
                #[serde(skip_serializing_if = "Option::is_none")]
                hot: Option<&'a layout_diff::perf::hotmap::HotFollow>,
                #[serde(skip_serializing_if = "Option::is_none")]
                prediction: Option<&'a serde_json::Value>,
            }
            let doc = WithHot {
                report: &report,
                hot: follow.as_ref(),
                prediction: preface.map(|p| &p.json),
            };
            let mut s = json::document("layout-diff-diff", &doc)?;
            s.push('\n');
            s
        }
    };
    if let Some(f) = &follow {
        match args.common.format() {
            Format::Text => text += &hot_text::follow(f),
            Format::Markdown => text += &format!("\n```\n{}```\n", hot_text::follow(f)),
            Format::Json | Format::Html => {}
        }
    }
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

/// `layout-diff check --rules FILE IMAGE` or `... OLD NEW`: loads only the structs the
/// rules name (and symbols, which the ELF gives), evaluates, renders.
pub fn check(args: &CheckArgs) -> Result<Output> {
    let rules = layout_diff::check::rules::load(&args.rules)?;
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
    let patterns = rules.struct_patterns();
    let options = LoadOptions {
        line_size: args.common.line_size,
        rust: args.common.rust(),
        dwarf: !patterns.is_empty(),
        structs: if patterns.is_empty() {
            StructFilter::None
        } else {
            StructFilter::Matching(show::globs(&patterns).context("bad struct name in rules")?)
        },
        variables: false,
        ..LoadOptions::default()
    };
    let new_file = InputFile::open(new_path)?;
    let old_file = old_path.map(|p| InputFile::open(p)).transpose()?;
    // OLD is read only for growth rules (the others are about NEW).
    let old_file = old_file.filter(|_| rules.needs_old());
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
            return Err(layout_diff::Error::NoDebugInfo {
                path: img.path.clone(),
            }
            .into());
        }
    }
    let report = layout_diff::check::eval::check(&rules, &new, old.as_ref());
    let text = match args.common.format() {
        Format::Text => check_text::render(&report),
        Format::Markdown => check_markdown::render(&report),
        Format::Html => html::check(&report),
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

/// One line for each `--struct` or `--symbol`/`--hot` pattern that names nothing in
/// either build (a typo would otherwise pass silently).
fn unmatched_patterns(
    args: &DiffArgs,
    symbols: &[String],
    old: &layout_diff::model::Image<'_>,
    new: &layout_diff::model::Image<'_>,
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
