//! `layout-diff show`: one build's summary, structs, symbols or one line, in text,
//! JSON or HTML.

use anyhow::{Context, Result};

use super::args::ShowArgs;
use super::{Output, kaslr_for, progress, read_hot};
use layout_diff_core::InputFile;
use layout_diff_core::load::{LoadOptions, StructFilter};
use layout_diff_core::model::Space;
use layout_diff_core::perf::HotInput;
use layout_diff_core::show::{self, Header};
use layout_diff_report::{Format, hot_text, html, json, show_text, string};

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
    // The cache keeps no source lines: the views that print them (a symbol's writers
    // and readers, a line's code) read the vmlinux.
    let lines = !symbol_args.is_empty() || (args.line.is_some() && !args.percpu);
    let cache = match lines {
        true => None,
        false => super::cache::for_command(&args.common)?,
    };
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
        // Symbols by plain name alone: only the variables their view prints are read.
        variables_for: if args.structs.is_empty()
            && c2c.is_none()
            && profile.is_none()
            && symbol_args
                .iter()
                .all(|p| !p.contains(GLOB_CHARS) && !p.contains(':'))
        {
            symbol_args.clone()
        } else {
            Vec::new()
        },
        pahole_text: true,
        // Only names spelled out in full, as `pahole -C NAME` takes them.
        typedefs: args
            .structs
            .iter()
            .filter(|p| !p.contains(GLOB_CHARS))
            .cloned()
            .collect(),
        all_typedefs: false,
        // Who writes a symbol's bytes and each line's: the code of the build.
        code: !symbol_args.is_empty() || args.line.is_some(),
    };
    let bar = progress(&format!("loading {}", args.file.display()));
    let file = file.through_cache(cache.as_ref());
    let image = file.load(&options);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let image = image?;
    if !args.structs.is_empty() && !image.has_debug_info {
        return Err(layout_diff_core::Error::NoDebugInfo {
            path: args.file.clone(),
        }
        .into());
    }
    let header = Header::of(&image);
    if html {
        return show_html(args, &image, &header, &structs, &symbols, &symbol_args);
    }
    let json = args.common.format() == Format::Json;
    let mut text = String::new();
    let mut missing = Vec::new();
    if summary_only {
        let s = show::summary(&image);
        text += &section(json, "layout-diff-summary", &header, "summary", &s, || {
            string(|o| show_text::write_summary(o, &header, &s))
        })?;
    }
    if !args.structs.is_empty() {
        let laid = show::structs(&image, &structs);
        if laid.is_empty() {
            missing.push(format!("no struct matches {}", args.structs.join(", ")));
        }
        text += &section(json, "layout-diff-show", &header, "structs", &laid, || {
            string(|o| show_text::write_structs(o, &header, &laid, args.annotate))
        })?;
    }
    if !symbol_args.is_empty() {
        let mut views = show::symbols(&image, &symbols);
        // The writers' and readers' source lines, from `.debug_line` (read only when
        // the code gave some).
        let rows = |v: &mut show::SymbolView<'_, '_>| {
            v.accesses
                .as_mut()
                .map(|a| a.writers.len() + a.readers.len())
                .unwrap_or(0)
        };
        if views.iter_mut().map(rows).sum::<usize>() > 0
            && let Some(lines) = file.source_lines()?
        {
            for a in views.iter_mut().filter_map(|v| v.accesses.as_mut()) {
                for r in a.writers.iter_mut().chain(a.readers.iter_mut()) {
                    r.source = lines.find(r.insn);
                }
            }
        }
        if views.is_empty() {
            missing.push(format!("no symbol matches {}", symbol_args.join(", ")));
        }
        text += &section(
            json,
            "layout-diff-symbols",
            &header,
            "symbols",
            &views,
            || string(|o| show_text::write_symbols(o, &header, &views)),
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
            string(|o| show_text::write_line(o, &header, &view))
        })?;
    }
    if let (Some(report), Some(path)) = (&c2c, &args.hot) {
        let kaslr = kaslr_for(report, &image, args.kaslr_offset, path)?;
        let map = layout_diff_core::perf::hotmap::map(report, &image, kaslr);
        text += &section(json, "layout-diff-hot", &header, "hot", &map, || {
            string(|o| hot_text::show(o, &header, &map))
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
            string(|o| hot_text::types(o, &header, &types, &objects))
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
    image: &layout_diff_core::Image<'_>,
    header: &Header,
    structs: &globset::GlobSet,
    symbols: &globset::GlobSet,
    symbol_args: &[String],
) -> Result<Output> {
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
    Ok(Output {
        text: string(|o| html::show(o, header, &laid, &views))?,
        code: u8::from(!missing.is_empty()),
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
    text: impl FnOnce() -> Result<String, std::fmt::Error>,
) -> Result<String> {
    if !json {
        return Ok(text()?);
    }
    let mut body = serde_json::Map::new();
    body.insert(key.to_string(), serde_json::to_value(value)?);
    let mut out = json::render(kind, header, body)?;
    out.push('\n');
    Ok(out)
}
