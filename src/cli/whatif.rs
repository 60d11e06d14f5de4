//! `layout-diff whatif`: a predicted build diffed against the build it comes from.

use anyhow::Result;
use clap::ArgMatches;

use super::args::{DiffArgs, WhatifArgs};
use super::diff::{Builds, Preface, compare, prepare};
use super::{Output, progress};
use layout_diff_core::InputFile;
use layout_diff_core::whatif::Prediction;
use layout_diff_core::whatif::objects::ObjectFile;

/// `layout-diff whatif IMAGE CHANGES`: the build laid out again with the changes,
/// diffed against it like a real new build.
/// `matches` are clap's for the whole command line: the changes are read from them in
/// order.
pub fn whatif(args: &WhatifArgs, matches: &ArgMatches) -> Result<Output> {
    // With object files, a change may be given by them alone; a change given wrongly
    // is an error all the same.
    let whatif = matches.subcommand_matches("whatif").unwrap_or(matches);
    let changes = super::changes::from_matches(whatif, !args.objects.is_empty())?;
    let objects = args
        .objects
        .iter()
        .map(|p| ObjectFile::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let diff_args = diff_args(args);
    let prep = prepare(&diff_args)?;
    let load = super::diff_load_options(&args.common);
    let t0 = std::time::Instant::now();
    let bar = progress("loading the build");
    let cache = super::cache::for_command(&args.common)?;
    let file = InputFile::open(&args.file)?;
    // Symbols the objects add or remove resize the kallsyms tables, which the build's
    // own bytes hold (a cached snapshot does not).
    let tables = match args.objects.is_empty() {
        true => None,
        false => file.kallsyms(),
    };
    let file = file.through_cache(cache.as_ref());
    let image = file.load(&load)?;
    if !image.has_debug_info {
        return Err(layout_diff_core::Error::NoDebugInfo {
            path: args.file.clone(),
        }
        .into());
    }
    // The build's link model and variables, found once for the prediction and for the
    // diff against the build.
    let vars = image.variables_of_symbols();
    let link = layout_diff_core::link::LinkMap::build_from(&image, &vars);
    let p = layout_diff_core::whatif::predict_from(
        &image,
        &link,
        &vars,
        &changes,
        &objects,
        tables.as_ref(),
    )
    .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    if args.nm {
        return Ok(nm(&p));
    }
    let preface = preface(&p, &objects);
    let builds = Builds {
        old: &image,
        new: &p.image,
        old_link: Some(&link),
    };
    let out = compare(
        &diff_args,
        prep,
        builds,
        bar,
        (t0, std::time::Instant::now()),
        Some(&preface),
    );
    std::mem::forget((p, link, vars));
    std::mem::forget(image);
    std::mem::forget(file);
    out
}

/// The args of the diff of the build against its prediction.
fn diff_args(args: &WhatifArgs) -> DiffArgs {
    DiffArgs {
        old: args.file.clone(),
        new: args.file.clone(),
        symbols: Vec::new(),
        structs: Vec::new(),
        access: false,
        report: args.report.clone(),
        common: args.common.clone(),
    }
}

/// `--nm`: the predicted build's symbols, as `nm` lists them.
fn nm(p: &Prediction<'_>) -> Output {
    let mut text = String::new();
    for s in &p.image.symbols {
        let kind = match s.kind {
            layout_diff_core::model::SymbolKind::Function => 't',
            _ => 'd',
        };
        text += &format!("{:016x} {:016x} {kind} {}\n", s.address, s.size, s.name);
    }
    Output {
        text,
        code: 0,
        note: None,
    }
}

/// What the prediction says of itself: its changes, how well its link model
/// reproduces the build, what moved and what it assumed or could not predict.
fn preface(p: &Prediction<'_>, objects: &[ObjectFile]) -> Preface {
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
    // Said when a section moves; a section that only grows is the objects' growth.
    let moved = p.sections_moved.iter().any(|m| m.shift != 0);
    if moved {
        text += &format!("  output sections: {}\n", sections_moved(&p.sections_moved));
    }
    for a in &p.assumptions {
        text += &format!("  assumed: {a}\n");
    }
    for c in &p.caveats {
        text += &format!("  not predicted: {c}\n");
    }
    text.push('\n');
    let mut json = serde_json::json!({
            "predicted": true,
            "changes": described,
            "objects": p.objects,
            "reproduced": p.reproduced,
            "functions": p.functions,
            "functions_reproduced": p.functions_reproduced,
            "moved": p.moved,
            "not_predicted": p.caveats,
            "assumed": p.assumptions,
    });
    if moved {
        json["sections_moved"] = p
            .sections_moved
            .iter()
            .map(|m| serde_json::json!({"name": m.name, "shift": m.shift, "grew": m.grew}))
            .collect();
    }
    Preface { text, json }
}

/// The output sections a prediction moves or resizes, runs of one shift together:
/// `.data..percpu grows 512 B; .init.text .. .bss +4096 B (12 sections)`.
fn sections_moved(moved: &[layout_diff_core::whatif::SectionMoved]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < moved.len() {
        let m = &moved[k];
        if m.grew != 0 {
            let verb = if m.grew > 0 { "grows" } else { "shrinks" };
            let shift = if m.shift != 0 {
                format!(" and moves {:+} B", m.shift)
            } else {
                String::new()
            };
            parts.push(format!(
                "{} {verb} {} B{shift}",
                m.name,
                m.grew.unsigned_abs()
            ));
            k += 1;
            continue;
        }
        let run = moved[k..]
            .iter()
            .take_while(|n| n.grew == 0 && n.shift == m.shift)
            .count();
        let last = &moved[k + run - 1];
        parts.push(match run {
            1 => format!("{} {:+} B", m.name, m.shift),
            n => format!("{} .. {} {:+} B ({n} sections)", m.name, last.name, m.shift),
        });
        k += run;
    }
    parts.join("; ")
}
