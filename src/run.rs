//! Glue between the command line and the library: load what a command needs, run it,
//! render in the chosen format, and say which exit code the outcome deserves.

use anyhow::{Context, Result};

use crate::cli::{DiffArgs, ShowArgs};
use crate::load::{InputFile, LoadOptions, StructFilter};
use crate::model::Space;
use crate::report::{Format, json, show_text};
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
        text = if json {
            json::render(
                "layout-diff-summary",
                &header,
                serde_json::json!({ "summary": s }),
            )
        } else {
            show_text::summary(&header, &s)
        };
    }
    let mut parts = Vec::new();
    if !args.structs.is_empty() {
        let laid = show::structs(&image, &structs);
        if laid.is_empty() {
            missing.push(format!("no struct matches {}", args.structs.join(", ")));
        }
        parts.push(if json {
            json::render(
                "layout-diff-show",
                &header,
                serde_json::json!({ "structs": laid }),
            )
        } else {
            show_text::structs(&header, &laid)
        });
    }
    if !args.symbols.is_empty() {
        let views = show::symbols(&image, &symbols);
        if views.is_empty() {
            missing.push(format!("no symbol matches {}", args.symbols.join(", ")));
        }
        parts.push(if json {
            json::render(
                "layout-diff-symbols",
                &header,
                serde_json::json!({ "symbols": views }),
            )
        } else {
            show_text::symbols(&header, &views)
        });
    }
    if let Some(at) = args.line {
        let space = if args.percpu {
            Space::Percpu
        } else {
            Space::Global
        };
        let view = show::line(&image, space, at);
        parts.push(if json {
            json::render(
                "layout-diff-line",
                &header,
                serde_json::json!({ "line": view }),
            )
        } else {
            show_text::line(&header, &view)
        });
    }
    for p in parts {
        text.push_str(&p);
        if json {
            text.push('\n');
        }
    }
    Ok(Output {
        text,
        code: if missing.is_empty() { 0 } else { 1 },
        note: (!missing.is_empty()).then(|| missing.join("; ")),
    })
}

/// `layout-diff OLD NEW`.
pub fn diff(_args: &DiffArgs) -> Result<Output> {
    anyhow::bail!("diff is not implemented yet")
}
