//! `layout-diff show`: one build's summary, structs, symbols or one line, in text,
//! JSON or HTML.

use std::fmt::Write as _;

use anyhow::{Context, Result};

use super::args::ShowArgs;
use super::{Output, progress};
use layout_diff_core::contention;
use layout_diff_core::evidence::Measured;
use layout_diff_core::evidence::frequency::Frequencies;
use layout_diff_core::evidence::gather::{self, Gathered, Read};
use layout_diff_core::load::{LoadOptions, StructFilter};
use layout_diff_core::model::Space;
use layout_diff_core::show::{self, Header};
use layout_diff_core::{Image, InputFile};
use layout_diff_report::{Format, contention_text, hot_text, html, json, show_text, string};

/// Characters that make a `--struct` pattern a glob rather than a plain name.
const GLOB_CHARS: [char; 5] = ['*', '?', '[', '{', '\\'];

/// `layout-diff show`.
pub fn show(args: &ShowArgs) -> Result<Output> {
    if args.common.format() == Format::Markdown {
        anyhow::bail!("show has no Markdown output; use --format text or --format json");
    }
    let (file, evidence, symbol_args) = open(args)?;
    let cache = cache_unless_lines(args, &symbol_args)?;
    check_flags(args)?;
    let request = Request::new(args, &evidence, symbol_args)?;
    request.check_html()?;
    let options = request.load_options(args);
    let bar = progress(&format!("loading {}", args.file.display()));
    let file = file.through_cache_for(cache.as_ref(), args.access || args.contention);
    let image = loaded(args, bar, file.load(&options))?;
    let gathered = gather::gather(evidence, &image, None)?;
    let header = Header::of(&image);
    if request.html {
        return show_html(args, &image, &header, &request);
    }
    let mut out = Sections::new(args, &header);
    out.notes.extend(
        gathered
            .files
            .iter()
            .filter(|f| f.is_partial())
            .map(|f| f.note()),
    );
    if args.contention {
        out.contention(args, &image, &gathered)?;
        return Ok(out.finish(args, &file, false));
    }
    if request.summary_only {
        out.summary(&image)?;
        if args.access {
            out.coverage(&image)?;
        }
    }
    if !args.structs.is_empty() {
        out.structs(args, &image, &request.structs)?;
    }
    if args.access && !args.structs.is_empty() {
        out.access(&image, &file, &request.structs)?;
    }
    if !request.symbol_args.is_empty() {
        out.symbols(&image, &file, &request)?;
    }
    let snapshot_lines = match args.line {
        Some(at) => out.line(args, &image, &file, at)?,
        None => false,
    };
    out.hot(&gathered)?;
    if request.profile.is_some() {
        out.hot_types(&image, &gathered.hotness.measured)?;
    }
    Ok(out.finish(args, &file, snapshot_lines))
}

/// Opens the build, with its `--symbol-list`, and reads `--hot` (`evidence::gather`);
/// returns them with the `--symbol` patterns and the names of a hand-written `--hot`
/// list.
fn open(args: &ShowArgs) -> Result<(InputFile, Read, Vec<String>)> {
    let mut file = InputFile::open(&args.file)?;
    if let Some(list) = &args.symbol_list {
        file = file.with_symbols(list)?;
    }
    let evidence = gather::read(gather::Sources {
        hot: args.hot.as_slice(),
        hot_list: &args.hot_list,
        kaslr_offset: args.kaslr_offset,
    })?;
    let mut symbol_args = args.symbols.clone();
    symbol_args.extend(evidence.names());
    Ok((file, evidence, symbol_args))
}

/// The command's cache, unless a view that prints source lines is asked for.
fn cache_unless_lines(
    args: &ShowArgs,
    symbol_args: &[String],
) -> Result<Option<layout_diff_core::cache::Cache>> {
    // The cache keeps no source lines: the views that print them (a symbol's writers
    // and readers, a line's code) read the vmlinux.
    let lines = !symbol_args.is_empty() || (args.line.is_some() && !args.percpu);
    Ok(match lines {
        true => None,
        false => super::cache::for_command(&args.common)?,
    })
}

/// Refuses `--annotate` without `--struct` (`evidence::gather::read` refuses
/// `--kaslr-offset` without a perf c2c `--hot`).
fn check_flags(args: &ShowArgs) -> Result<()> {
    if args.annotate && args.structs.is_empty() {
        anyhow::bail!("--annotate annotates --struct layouts; give --struct NAME");
    }
    Ok(())
}

/// What `show` was asked for, worked out from its arguments before the build loads.
struct Request {
    /// The `--symbol` patterns and the names of a hand-written `--hot` list.
    symbol_args: Vec<String>,
    /// A perf c2c report is given with `--hot`.
    c2c: bool,
    /// The struct types of a perf profile given with `--hot`.
    profile: Option<Vec<String>>,
    /// The `--struct` patterns.
    structs: globset::GlobSet,
    /// The symbol patterns.
    symbols: globset::GlobSet,
    /// Nothing but the build's summary is asked for.
    summary_only: bool,
    /// `--format html`.
    html: bool,
    /// `--line` is given.
    line: bool,
    /// `--contention` is given.
    contention: bool,
}

impl Request {
    /// Tells `--hot` by kind and compiles the patterns.
    fn new(args: &ShowArgs, evidence: &Read, symbol_args: Vec<String>) -> Result<Request> {
        let c2c = evidence.has_c2c();
        let profile = evidence.profiles().next().map(profile_types);
        let structs = show::globs(&args.structs).context("bad --struct pattern")?;
        let symbols = show::globs(&symbol_args).context("bad --symbol pattern")?;
        let summary_only = args.structs.is_empty()
            && !args.contention
            && symbol_args.is_empty()
            && args.line.is_none()
            && !c2c
            && profile.is_none();
        Ok(Request {
            symbol_args,
            c2c,
            profile,
            structs,
            symbols,
            summary_only,
            html: args.common.format() == Format::Html,
            line: args.line.is_some(),
            contention: args.contention,
        })
    }

    /// Refuses HTML for the views it does not draw.
    fn check_html(&self) -> Result<()> {
        if self.html && (self.summary_only || self.line || self.c2c || self.contention) {
            anyhow::bail!(
                "show --format html draws --struct and --symbol; use --format text or json for the summary, --line, --contention and a perf c2c --hot"
            );
        }
        Ok(())
    }

    /// What to read from the build for the views asked for.
    fn load_options(&self, args: &ShowArgs) -> LoadOptions {
        if self.contention {
            // The audit names every object's members (its type and the structs it
            // embeds) and reads both access maps: the whole build, as a diff reads it.
            return LoadOptions {
                line_size: args.common.line_size,
                rust: args.common.rust(),
                code: true,
                typed: true,
                pahole_text: false,
                ..LoadOptions::default()
            };
        }
        let (summary_only, symbol_args) = (self.summary_only, &self.symbol_args);
        let (c2c, profile) = (self.c2c, &self.profile);
        LoadOptions {
            line_size: args.common.line_size,
            rust: args.common.rust(),
            dwarf: summary_only
                || !args.structs.is_empty()
                || !symbol_args.is_empty()
                || c2c
                || profile.is_some(),
            structs: self.struct_filter(args),
            variables: summary_only || !symbol_args.is_empty() || c2c || profile.is_some(),
            // Symbols by plain name alone: only the variables their view prints are read.
            variables_for: if args.structs.is_empty()
                && !c2c
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
            code: !symbol_args.is_empty() || args.line.is_some() || args.access,
            // Who touches each member of a type through a pointer.
            typed: args.access,
        }
    }

    /// Which structs to lay out.
    fn struct_filter(&self, args: &ShowArgs) -> StructFilter {
        if self.summary_only {
            StructFilter::All
        } else if let (true, Some(types)) = (args.structs.is_empty(), &self.profile) {
            // The profile's types, found by name as `--struct NAME` finds them.
            StructFilter::Named(types.clone())
        } else if args.structs.is_empty() {
            StructFilter::None
        } else if args.structs.iter().all(|p| !p.contains(GLOB_CHARS)) {
            // Plain names: found without decoding every unit (`load::lookup`).
            StructFilter::Named(args.structs.clone())
        } else {
            StructFilter::Matching(self.structs.clone())
        }
    }
}

/// The struct types a perf profile measured, by name.
fn profile_types(m: &Measured) -> Vec<String> {
    m.types().iter().map(|(t, _)| t.to_string()).collect()
}

/// The loaded build: clears the progress bar and refuses `--struct` on a build
/// without debug info.
fn loaded<'f>(
    args: &ShowArgs,
    bar: Option<indicatif::ProgressBar>,
    image: layout_diff_core::Result<Image<'f>>,
) -> Result<Image<'f>> {
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
    Ok(image)
}

/// `show`'s text or JSON output, section by section, and what was not found.
struct Sections<'h> {
    /// `--format json`.
    json: bool,
    /// The build's header.
    header: &'h Header,
    /// The output so far.
    text: String,
    /// What was asked for and not found, one line each.
    missing: Vec<String>,
    /// What else stderr says, without failing (a `--hot` file partly matched).
    notes: Vec<String>,
}

impl<'h> Sections<'h> {
    /// No section yet.
    fn new(args: &ShowArgs, header: &'h Header) -> Sections<'h> {
        Sections {
            json: args.common.format() == Format::Json,
            header,
            text: String::new(),
            missing: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Appends one section (see [`section`]).
    fn push<T: serde::Serialize>(
        &mut self,
        kind: &str,
        key: &str,
        value: &T,
        text: impl FnOnce() -> Result<String, std::fmt::Error>,
    ) -> Result<()> {
        self.text += &section(self.json, kind, self.header, key, value, text)?;
        Ok(())
    }

    /// The build's summary.
    fn summary(&mut self, image: &Image<'_>) -> Result<()> {
        let header = self.header;
        let s = show::summary(image);
        self.push("layout-diff-summary", "summary", &s, || {
            string(|o| show_text::write_summary(o, header, &s))
        })
    }

    /// The `--struct` layouts.
    fn structs(
        &mut self,
        args: &ShowArgs,
        image: &Image<'_>,
        structs: &globset::GlobSet,
    ) -> Result<()> {
        let header = self.header;
        let laid = show::structs(image, structs);
        if laid.is_empty() {
            self.missing
                .push(format!("no struct matches {}", args.structs.join(", ")));
        }
        self.push("layout-diff-show", "structs", &laid, || {
            string(|o| show_text::write_structs(o, header, &laid, args.annotate))
        })
    }

    /// The contention audit (`contention::audit`), restricted to the `--struct` type.
    fn contention(&mut self, args: &ShowArgs, image: &Image<'_>, g: &Gathered) -> Result<()> {
        let header = self.header;
        let name = match args.structs.as_slice() {
            [] => None,
            [one] if !one.contains(GLOB_CHARS) => Some(one.as_str()),
            _ => anyhow::bail!("--contention takes one --struct NAME, a plain name"),
        };
        if !image.access.supported || !image.typed.supported {
            self.missing.push(
                "--contention needs an x86-64 build with DWARF and code: this one has no access map"
                    .to_string(),
            );
        }
        if let Some(n) = name
            && image.typed.type_index(n).is_none()
            && !image.structs.iter().any(|s| s.name == n)
        {
            self.missing.push(format!("no struct matches {n}"));
        }
        let freq = Frequencies::of(image, &g.hotness);
        let audit = contention::audit(image, &freq, name);
        let all = args.all;
        self.push("layout-diff-contention", "contention", &audit, || {
            string(|o| contention_text::write(o, header, &audit, all))
        })
    }

    /// How much of the build's code the typed access map could type.
    fn coverage(&mut self, image: &Image<'_>) -> Result<()> {
        let Some(view) = layout_diff_core::typed::view::coverage(image) else {
            self.missing.push(
                "--access needs an x86-64 build with DWARF and code: this one has no typed access map"
                    .to_string(),
            );
            return Ok(());
        };
        self.push("layout-diff-coverage", "coverage", &view, || {
            string(|o| {
                writeln!(o)?;
                layout_diff_report::access_text::write_coverage(o, &view)
            })
        })
    }

    /// Who touches each member of the `--struct` types through a pointer (the typed
    /// access map), with the first functions' source lines when the build has them.
    fn access(
        &mut self,
        image: &Image<'_>,
        file: &InputFile,
        structs: &globset::GlobSet,
    ) -> Result<()> {
        if !image.typed.supported {
            self.missing.push(
                "--access needs an x86-64 build with DWARF and code: this one has no typed access map"
                    .to_string(),
            );
            return Ok(());
        }
        // A cached build keeps no source lines: the vmlinux it came from has them.
        let reopened = match file.is_cached() {
            true => InputFile::open(file.path()).ok(),
            false => None,
        };
        let lines = reopened
            .as_ref()
            .unwrap_or(file)
            .source_lines()
            .ok()
            .flatten();
        let find = |a: u64| lines.as_ref().and_then(|l| l.find(a));
        let lookup: Option<&show::SourceLookup> = lines.is_some().then_some(&find);
        let mut names: Vec<&str> = image
            .typed
            .types
            .iter()
            .map(String::as_str)
            .chain(image.structs_named(|_| true).map(|(_, s)| s.name))
            .filter(|n| !n.is_empty() && structs.is_match(n))
            .collect();
        names.sort_unstable();
        names.dedup();
        let views: Vec<_> = names
            .iter()
            .filter_map(|n| layout_diff_core::typed::view::type_view(image, n, lookup))
            .collect();
        self.push("layout-diff-access", "access", &views, || {
            // The `--struct` section before it printed the header.
            string(|o| {
                for v in &views {
                    writeln!(o)?;
                    layout_diff_report::access_text::write_type_access(o, v)?;
                }
                Ok(())
            })
        })
    }

    /// The symbols asked for, with their writers' and readers' source lines.
    fn symbols(&mut self, image: &Image<'_>, file: &InputFile, request: &Request) -> Result<()> {
        let header = self.header;
        let mut views = show::symbols(image, &request.symbols);
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
            self.missing.push(format!(
                "no symbol matches {}",
                request.symbol_args.join(", ")
            ));
        }
        self.push("layout-diff-symbols", "symbols", &views, || {
            string(|o| show_text::write_symbols(o, header, &views))
        })
    }

    /// The line at `at`; returns whether its source lines were found.
    fn line(
        &mut self,
        args: &ShowArgs,
        image: &Image<'_>,
        file: &InputFile,
        at: u64,
    ) -> Result<bool> {
        let header = self.header;
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
        let view = show::line(image, space, at, lookup);
        if view.symbols.is_empty() {
            self.missing.push(nothing_on_line(image, space, at));
        }
        self.push("layout-diff-line", "line", &view, || {
            string(|o| show_text::write_line(o, header, &view))
        })?;
        Ok(lines.is_some())
    }

    /// The perf c2c report's hot lines on this build, when one is given.
    fn hot(&mut self, gathered: &Gathered) -> Result<()> {
        let header = self.header;
        let Some((_, map)) = gathered.maps.first() else {
            return Ok(());
        };
        self.push("layout-diff-hot", "hot", map, || {
            string(|o| hot_text::show(o, header, map))
        })
    }

    /// The perf profile's types and objects on this build.
    fn hot_types(&mut self, image: &Image<'_>, m: &Measured) -> Result<()> {
        let header = self.header;
        let (types, objects) = show::hot_types(image, m);
        if types.is_empty() && objects.is_empty() {
            self.missing
                .push("no type or object of the perf profile is in this image".to_string());
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
        self.push("layout-diff-hot-types", "hot", &doc, || {
            string(|o| hot_text::types(o, header, &types, &objects))
        })
    }

    /// The output, its exit code (1 if anything was not found) and its note.
    fn finish(mut self, args: &ShowArgs, file: &InputFile, snapshot_lines: bool) -> Output {
        let code = if self.missing.is_empty() { 0 } else { 1 };
        if args.line.is_some() && !args.percpu && file.is_snapshot() && !snapshot_lines {
            self.missing.push(format!(
                "{}: a snapshot keeps no source lines; give the vmlinux for them",
                args.file.display()
            ));
        }
        self.missing.append(&mut self.notes);
        Output {
            text: self.text,
            code,
            note: (!self.missing.is_empty()).then(|| self.missing.join("; ")),
        }
    }
}

/// Why nothing is on the line at `at`: in `.data..percpu`, `--percpu` is the hint.
fn nothing_on_line(image: &Image<'_>, space: Space, at: u64) -> String {
    let in_percpu = space == Space::Global
        && image
            .sections
            .iter()
            .find(|s| s.name == ".data..percpu")
            .is_some_and(|s| at >= s.address && at < s.address.saturating_add(s.size));
    if in_percpu {
        format!(
            "nothing on the line at {at:#x}; it is in .data..percpu: per-CPU objects are found by offset, try --percpu"
        )
    } else {
        format!("nothing on the line at {at:#x}")
    }
}

/// `show --struct`/`--symbol --format html`: one page with every match.
fn show_html(
    args: &ShowArgs,
    image: &Image<'_>,
    header: &Header,
    request: &Request,
) -> Result<Output> {
    let (structs, symbols) = (&request.structs, &request.symbols);
    let symbol_args = &request.symbol_args;
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
