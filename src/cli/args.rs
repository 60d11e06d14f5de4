//! The command line: every subcommand, flag and help text, in one place.

use std::path::PathBuf;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use clap::ValueEnum;
use layout_diff_report::Format;

#[derive(Debug, Parser)]
#[command(
    name = "layout-diff",
    // The crate version, and the git commit it was built from (build.rs).
    version = env!("LAYOUT_DIFF_VERSION"),
    about = "What moved between cache lines in a vmlinux, and between two builds",
    after_help = "`layout-diff OLD NEW [OPTIONS]` is short for `layout-diff diff OLD NEW [OPTIONS]`.\n\
Exit status: 0 nothing flagged in a --fail-on category (or found), 1 flagged changes (or\n\
no match), 2 error. The manual: docs/guide.md, or `man layout-diff`.\n\n\
Examples:\n  \
layout-diff old/vmlinux new/vmlinux                    # what moved between cache lines\n  \
layout-diff show vmlinux --struct task_struct          # as pahole -C prints it\n  \
layout-diff show /sys/kernel/btf/vmlinux --struct rq   # the running kernel's types\n  \
layout-diff check --rules layout.toml vmlinux          # pass or fail for each rule\n  \
layout-diff whatif vmlinux --struct mce=+8             # predict a change without building it"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses the process arguments; `layout-diff OLD NEW ...` means `layout-diff diff OLD NEW ...`.
    /// clap's matches come too: `whatif` reads its changes from them in order
    /// (`changes::from_matches`).
    pub fn parse_args() -> (Cli, ArgMatches) {
        let args = std::env::args_os().collect();
        let parsed = with_default_command(args).map(|args| {
            Cli::matches_from(args).map_err(|e| match e.kind() {
                clap::error::ErrorKind::DisplayHelp
                | clap::error::ErrorKind::DisplayVersion
                | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
                _ => one_line(&e.render().to_string()),
            })
        });
        match parsed {
            Ok(Ok(parsed)) => parsed,
            Ok(Err(e)) | Err(e) => {
                eprintln!("layout-diff: {e}");
                std::process::exit(2)
            }
        }
    }
}

impl Cli {
    /// What `Cli::try_parse_from` does, keeping clap's matches.
    fn matches_from(args: Vec<std::ffi::OsString>) -> Result<(Cli, ArgMatches), clap::Error> {
        let matches = Cli::command().try_get_matches_from(args)?;
        let mut taken = matches.clone();
        let cli =
            Cli::from_arg_matches_mut(&mut taken).map_err(|e| e.format(&mut Cli::command()))?;
        Ok((cli, matches))
    }
}

/// clap's usage error (the error, a tip, the usage line, a pointer to --help on lines
/// of their own) as one line: the error, then its tips and the usage, `; `-separated.
pub fn one_line(rendered: &str) -> String {
    let mut parts = Vec::new();
    for line in rendered.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("For more information") {
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        match line.strip_prefix("Usage: ") {
            Some(usage) => parts.push(format!("usage: {usage}")),
            None => parts.push(line.to_string()),
        }
    }
    parts.join("; ")
}

/// Every subcommand's name, and every option that takes a value as the next argument
/// (unless written `--opt=value`), read from clap's own description of the command line.
fn names_and_value_options() -> (Vec<String>, Vec<String>) {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let mut subcommands = vec!["help".to_string()];
    let mut with_value = Vec::new();
    for sub in cmd.get_subcommands() {
        subcommands.push(sub.get_name().to_string());
        for arg in sub
            .get_arguments()
            .filter(|a| a.get_action().takes_values())
        {
            if let Some(l) = arg.get_long() {
                with_value.push(format!("--{l}"));
            }
            if let Some(s) = arg.get_short() {
                with_value.push(format!("-{s}"));
            }
        }
    }
    with_value.sort();
    with_value.dedup();
    (subcommands, with_value)
}

/// Inserts `diff` when the first positional argument is not a subcommand, so options
/// may come before the files (`layout-diff --format json OLD NEW`). A first word that
/// is no file and is close to a subcommand's name is a misspelled subcommand.
pub fn with_default_command(
    mut args: Vec<std::ffi::OsString>,
) -> Result<Vec<std::ffi::OsString>, String> {
    let (known, with_value) = names_and_value_options();
    let mut i = 1;
    while let Some(arg) = args.get(i).map(|a| a.to_string_lossy().into_owned()) {
        if arg == "--" {
            break;
        }
        if arg.starts_with('-') {
            i += if with_value.contains(&arg) { 2 } else { 1 };
            continue;
        }
        if !known.contains(&arg) {
            let closest = known
                .iter()
                .map(|k| (strsim::damerau_levenshtein(k, &arg), k))
                .min();
            if let Some((d, k)) = closest
                && d <= 2
                && !std::path::Path::new(&arg).exists()
            {
                return Err(format!(
                    "unknown command {arg:?} (no such file either); did you mean {k:?}?"
                ));
            }
            args.insert(1, "diff".into());
        }
        break;
    }
    Ok(args)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect one build: a summary, or structs, symbols, one line, or a contention audit.
    #[command(
        after_help = "Formats: text, json, html (html draws --struct and --symbol).\n\n\
Examples:\n  \
layout-diff show vmlinux --struct user_struct          # as pahole -C prints it\n  \
layout-diff show vmlinux --symbol root_user            # lines, neighbours, type laid at its address\n  \
layout-diff show vmlinux --percpu --line 0x233e0       # everything on one per-CPU line\n  \
layout-diff show vmlinux --hot perf-type.txt           # sampled members of a perf data-type profile, with their lines\n  \
layout-diff show vmlinux --contention                  # lines frequent code writes while other frequent code touches them",
        mut_arg("format", |a| a.hide_possible_values(true).help("Output format: text, json or html"))
    )]
    Show(ShowArgs),
    /// What layout changed between two builds (the default command).
    #[command(
        after_help = "Exit status: 0 nothing flagged in a --fail-on category, 1 flagged, 2 error.\n\n\
Examples:\n  \
layout-diff old/vmlinux new/vmlinux                     # the first screen: root causes, hot objects, ...\n  \
layout-diff old/vmlinux new/vmlinux --explain root_user # evidence, root cause and rule for one name\n  \
layout-diff old.snap new.snap --hot perf-type.txt --format json   # measured evidence, every change"
    )]
    Diff(DiffArgs),
    /// Evaluate a rules file on a build (IMAGE), or on NEW with growth against OLD.
    #[command(
        after_help = "Rule keys, by table (every rule may carry why = \"...\"):\n  \
[struct.NAME]        max_size, max_cachelines, max_growth (needs OLD NEW), max_holes,\n                       \
line_start = [members], separate = [[members]], together = [[members]]\n  \
[symbol.NAME]        aligned = N, alone = true, not_with = [names], max_lines = N\n  \
[function.NAME]      align = N\n  \
[group.\"STRUCT.G\"]   max_size, max_lines, aligned = true\n\n\
Formats: text, json, markdown, html.\n\n\
Examples:\n  \
layout-diff check --rules layout.toml vmlinux\n  \
layout-diff check --rules layout.toml old/vmlinux new/vmlinux   # growth rules against OLD\n  \
layout-diff check --rules layout.toml vmlinux --format markdown # for a review comment"
    )]
    Check(CheckArgs),
    /// Predict the layout a change would make, from one build (or snapshot), without
    /// compiling: the predicted diff, in every format, marked as predicted.
    #[command(after_help = "Changes (repeatable, in any mix):\n  \
--struct NAME=+N | NAME=-N | NAME=SIZE   resize a struct (bytes added or removed at its end)\n  \
--struct NAME --member M=+N              a member grows by N bytes (M as C names it: also inside\n                                           \
an anonymous struct or union, whose layout follows)\n  \
--struct NAME --member M --after X       the member declared right after member X (--first: first)\n                                           \
among the members of its own struct or union\n  \
--struct NAME --member M --align N       the member aligned to N (____cacheline_aligned on it)\n  \
--struct NAME --insert M=N --after X     a new member of N bytes declared after X (--first: first;\n                                           \
--at OFFSET: before the member at that offset; --align A\n                                           \
before them: its alignment, else N's up to 8)\n  \
--struct NAME --align N                  the struct is aligned to N (____cacheline_aligned)\n  \
--symbol NAME --align N                  one object aligned to N (____cacheline_aligned_in_smp),\n                                           \
or one function (__aligned(N) on its definition)\n  \
--align-functions UNIT=N                 every function of one file aligned (-falign-functions=N)\n  \
--percpu-aligned NAME                    a per-CPU variable defined DEFINE_PER_CPU_ALIGNED, and\n                                           \
declared DECLARE_PER_CPU_ALIGNED where a header declares it:\n                                           \
it moves to ..shared_aligned\n  \
--percpu-aligned-definition NAME         the definition only: a header's DECLARE_PER_CPU keeps\n                                           \
the variable in .data..percpu, aligned in place\n  \
--read-mostly NAME                       an object defined __read_mostly (.data..read_mostly)\n  \
--objects FILE.o...                      recompiled objects: their code and data replace the old\n\n\
Every instance of a resized type, and every type that embeds it, changes size; the\n\
sections are laid out again with the link model. Without --objects, functions keep\n\
their sizes.\n\n\
Exit status: 0 nothing flagged in a --fail-on category, 1 flagged, 2 error.\n\n\
Examples:\n  \
layout-diff whatif vmlinux --struct mce=+8                    # which per-CPU neighbours move\n  \
layout-diff whatif vmlinux --symbol root_user --align 64      # a proposed alignment, checked\n  \
layout-diff whatif vmlinux --struct mce --insert flags=4 --after status\n  \
layout-diff whatif vmlinux --struct sk_buff --member dev=+8   # dev is in an anonymous union\n  \
layout-diff whatif v.snap --percpu-aligned mces_seen --format json")]
    Whatif(Box<WhatifArgs>),
    /// For each hot object the diff flags, the smallest change that gives it back its
    /// line facts, checked by `whatif`, with its cost, as C and as a `check` rule.
    #[command(after_help = "On OLD NEW, for each change the diff flags:\n  \
a hot object     it, or a new written neighbour, aligned to a line (____cacheline_aligned_in_smp;\n                   \
DEFINE_PER_CPU_ALIGNED for per-CPU variables); __read_mostly back first when it lost it\n  \
a hot member     the members that pushed it declared last, it declared before them, or aligned;\n                   \
inside the cache-line group whose members shared its OLD line\n  \
a hot function   __aligned(LINE) on its definition, or -falign-functions=LINE for its file (an OLD\n                   \
start mid-line: judged by the lines it covers)\n  \
a group          __cacheline_group_begin_aligned when it then fits; else the members added or grown\n                   \
in it, or the smallest as large as the excess, declared after its end\n\
Each is predicted on NEW with whatif and diffed against OLD again: it restores when the\n\
flag is gone. Cost: bytes added to the section or to each instance, what moves, lines.\n\n\
On one IMAGE: with --rules FILE, each failing rule (symbol aligned, alone, not_with,\n\
max_lines; function align; group aligned, max_lines, max_size; struct line_start,\n\
together, separate, max_size, max_cachelines, max_holes) gets the changes that make it\n\
pass, checked by evaluating the rules again on the prediction: objects, functions or\n\
group starts aligned; members aligned, declared elsewhere, moved into holes or out of\n\
a group (not a hot one when another passes). struct max_growth needs OLD: no fix. With\n\
--hot FILE alone, each measured-hot written object that shares a line with another\n\
written object gets a not_with rule, fixed the same way.\n\n\
Formats: text, json, markdown (a review comment: a heading per item, C and rules in code\n\
blocks) and html (one page).\n\n\
Exit status: 0 every flagged change (or failing rule) has a fix that restores it (passes),\n\
1 some have none (a group none of whose members can leave it to fit; a rule no candidate\n\
passes, as max_growth on one build), 2 error.\n\n\
Examples:\n  \
layout-diff suggest old/vmlinux new/vmlinux\n  \
layout-diff suggest old.snap new.snap --hot perf-type.txt --format json\n  \
layout-diff suggest old/vmlinux new/vmlinux --symbol futex_wait   # a function asked for\n  \
layout-diff suggest vmlinux --rules layout.toml                   # make failing rules pass\n  \
layout-diff suggest vmlinux --hot perf-type.txt                   # hot objects off written lines")]
    Suggest(SuggestArgs),
    /// Write one build's layout facts to a small snapshot file, which every command
    /// accepts wherever it accepts a vmlinux.
    #[command(after_help = "Examples:\n  \
layout-diff snapshot vmlinux -o v6.1.170.snap\n  \
layout-diff snapshot vmlinux --with-lines -o v6.1.170.snap      # with source lines for show --line\n  \
layout-diff snapshot vmlinux.btf --symbols System.map -o v.snap # a raw BTF blob and its addresses")]
    Snapshot(SnapshotArgs),
    /// One table per symbol or struct, one row per build (vmlinux files or snapshots,
    /// in series order), marking the builds where it changed lines.
    #[command(
        after_help = "Formats: text, json, markdown.\n\n\
Examples:\n  \
layout-diff history v6.1.*.snap --symbol root_user\n  \
layout-diff history a.snap b.snap c.snap --struct task_struct --format json",
        mut_arg("format", |a| a.hide_possible_values(true).help("Output format: text, json or markdown"))
    )]
    History(HistoryArgs),
    /// List the snapshot cache, or clear it.
    #[command(
        after_help = "The first read of a vmlinux with a build-id keeps its snapshot in\n\
$XDG_CACHE_HOME/layout-diff (else ~/.cache/layout-diff), keyed by the build-id, the file's size\n\
and its modification time; later commands on that file read the snapshot instead. The least\n\
recently used entries are removed past LAYOUT_DIFF_CACHE_SIZE (bytes, or with K, M, G or T;\n\
default 2G; 0 turns the cache off). --no-cache on any command reads the vmlinux and writes nothing;\n\
--lang all (Rust units), --symbols (a symbol list), show --symbol and show --line (source\n\
lines) always read the vmlinux.\n\n\
Examples:\n  \
layout-diff cache           # every entry: size, last use, the vmlinux it was read from\n  \
layout-diff cache --clear   # remove them all"
    )]
    Cache(CacheArgs),
    /// Walk every DIE of each file in parallel and decode nothing (the cold-path floor).
    #[command(hide = true)]
    BenchWalk(BenchWalkArgs),
    /// Write the man page or a shell's completions, generated from these definitions.
    #[command(
        hide = true,
        after_help = "Examples:\n  \
layout-diff generate man > layout-diff.1 && man ./layout-diff.1\n  \
layout-diff generate bash > ~/.local/share/bash-completion/completions/layout-diff\n  \
layout-diff generate zsh > ~/.zfunc/_layout-diff\n  \
layout-diff generate fish > ~/.config/fish/completions/layout-diff.fish"
    )]
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// What to write to stdout.
    #[arg(value_enum)]
    pub what: Generated,
}

/// `generate`'s argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Generated {
    /// The man page (roff), for `man ./layout-diff.1`.
    Man,
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    /// Remove every entry (and any temporary file a killed run left).
    #[arg(long)]
    pub clear: bool,
}

#[derive(Debug, Args)]
pub struct WhatifArgs {
    /// The build to change (vmlinux or snapshot).
    pub file: PathBuf,
    /// `NAME=+N`, `NAME=-N`, `NAME=SIZE` (resize), or `NAME` before --member/--align.
    #[arg(long = "struct", value_name = "NAME[=SIZE]")]
    pub structs: Vec<String>,
    /// `MEMBER=+N`: a member of the --struct before it grows; `MEMBER` alone: the
    /// member that --align, --after or --first after it applies to.
    #[arg(long = "member", value_name = "M[=+N]")]
    pub members: Vec<String>,
    /// The --member (or --insert) before it is declared right after this member.
    #[arg(long = "after", value_name = "MEMBER")]
    pub after: Vec<String>,
    /// The --member (or --insert) before it is declared first.
    // Given once for each --member or --insert it places (`suggest` may print
    // several moves in one command): a flag that takes no value, kept once per use so
    // its places on the command line are known.
    #[arg(
        long = "first",
        num_args = 0,
        default_missing_value = "true",
        action = clap::ArgAction::Append,
        value_parser = clap::value_parser!(bool)
    )]
    pub first: Vec<bool>,
    /// `MEMBER=N`: a new member of N bytes in the --struct before it, declared where
    /// --after, --first or --at after it says (--align before those: its alignment).
    #[arg(long = "insert", value_name = "M=N")]
    pub inserts: Vec<String>,
    /// The --insert before it is declared before the first member at this byte offset
    /// or after it (decimal or 0x hex).
    #[arg(long = "at", value_name = "OFFSET")]
    pub at: Vec<String>,
    /// Alignment in bytes for the --struct, --member or --symbol before it.
    #[arg(long = "align", value_name = "N")]
    pub aligns: Vec<u64>,
    /// An object or a function to align (with --align after it).
    #[arg(long = "symbol", value_name = "NAME")]
    pub symbols: Vec<String>,
    /// A per-CPU variable defined with DEFINE_PER_CPU_ALIGNED instead.
    #[arg(long = "percpu-aligned", value_name = "NAME")]
    pub percpu_aligned: Vec<String>,
    /// A per-CPU variable whose definition only is DEFINE_PER_CPU_ALIGNED (its
    /// header's DECLARE_PER_CPU left as it is).
    #[arg(long = "percpu-aligned-definition", value_name = "NAME")]
    pub percpu_aligned_definition: Vec<String>,
    /// `UNIT=N`: every function of one compile unit aligned to N (`-falign-functions=N`
    /// for that file); UNIT as DWARF names it (`kernel/futex/waitwake.c`).
    #[arg(long = "align-functions", value_name = "UNIT=N")]
    pub align_functions: Vec<String>,
    /// An object defined `__read_mostly` again: it moves to `.data..read_mostly` (x86),
    /// last of its unit's objects there.
    #[arg(long = "read-mostly", value_name = "NAME")]
    pub read_mostly: Vec<String>,
    /// Object files recompiled with the change (`make path/file.o`): their sections'
    /// sizes, alignments and symbol order replace their units' old ones, so code size
    /// changes are predicted too.
    #[arg(long, value_name = "FILE.o", num_args = 1..)]
    pub objects: Vec<PathBuf>,
    /// Print the predicted functions and data objects as `nm -n -S` prints them
    /// (address, size, `t` or `d`, name), instead of the report: to compare with a
    /// real build.
    #[arg(long)]
    pub nm: bool,
    #[command(flatten)]
    pub report: ReportArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct SuggestArgs {
    /// The build the flags are against; alone (with --rules or --hot), the build whose
    /// failing rules or shared hot lines are fixed.
    pub old: PathBuf,
    /// The build with the flagged changes; fixes are predicted on it.
    pub new: Option<PathBuf>,
    /// On one build: a `check` rules file whose failing placement rules get fixes.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Objects to fix too, whatever their evidence, when they gained neighbours, or
    /// functions when their start moved in its line (names as the report prints
    /// them; repeatable).
    #[arg(long = "symbol", value_name = "NAME")]
    pub symbols: Vec<String>,
    #[command(flatten)]
    pub evidence: EvidenceArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// The vmlinux to snapshot.
    pub file: PathBuf,
    /// Where to write the snapshot.
    #[arg(short, long, value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// Also keep the source line of each function start and each 64-byte boundary
    /// inside functions, for `show --line` (a larger file).
    #[arg(long)]
    pub with_lines: bool,
    /// Addresses from a symbol list (`System.map`, `/proc/kallsyms`), kept in the
    /// snapshot: needed for a raw BTF file (`vmlinux.btf`); beside an ELF, replaces its
    /// symbol table.
    #[arg(long = "symbols", value_name = "SYSTEM.MAP")]
    pub symbol_list: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The builds, oldest first (vmlinux files or snapshots).
    #[arg(required = true, num_args = 1.., value_name = "BUILD")]
    pub files: Vec<PathBuf>,
    /// Symbol names or globs.
    #[arg(long = "symbol", value_name = "NAME|GLOB")]
    pub symbols: Vec<String>,
    /// Struct or union names or globs.
    #[arg(long = "struct", value_name = "NAME|GLOB")]
    pub structs: Vec<String>,
    /// File with one symbol name, glob or `sym+0xOFF` per line.
    #[arg(long, value_name = "FILE")]
    pub hot: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct BenchWalkArgs {
    /// ELF files to walk.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Parse every attribute of every DIE (gimli's entries cursor) instead of skipping
    /// them by size: the floor of a reader that decodes everything.
    #[arg(long)]
    pub parse: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The rules file (TOML: [struct.NAME], [symbol.NAME], [function.NAME], [group."STRUCT.GROUP"]).
    #[arg(long, value_name = "FILE", required = true)]
    pub rules: PathBuf,
    /// IMAGE, or OLD NEW (growth rules compare NEW with OLD).
    #[arg(required = true, num_args = 1..=2, value_name = "IMAGE | OLD NEW")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args, Clone)]
pub struct Common {
    /// Cache line size in bytes (default: the target's, 64 on x86_64 and arm64).
    #[arg(long, value_name = "BYTES", value_parser = parse_line_size, global = true)]
    pub line_size: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text, global = true)]
    pub format: FormatArg,
    /// Which compile units' types to read: `c` (C and assembly, as `pahole
    /// --lang_exclude rust`) or `all` (Rust units' bindgen copies of C structs too).
    #[arg(long, value_enum, default_value_t = LangArg::C, global = true)]
    pub lang: LangArg,
    /// Read the vmlinux files themselves: neither take nor keep their snapshots in the
    /// cache (`layout-diff cache --help`).
    #[arg(long, global = true)]
    pub no_cache: bool,
}

/// `--lang`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    C,
    All,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The vmlinux (or any ELF with DWARF) to inspect.
    pub file: PathBuf,
    /// Struct or union names or globs (`'task_*'`, `'*'` for all).
    #[arg(long = "struct", value_name = "NAME|GLOB")]
    pub structs: Vec<String>,
    /// Symbol names or globs: placement, co-tenants, type laid at its address.
    #[arg(long = "symbol", value_name = "NAME|GLOB")]
    pub symbols: Vec<String>,
    /// `perf c2c report --stdio` output (hot lines mapped to objects and members), or
    /// a list of names, globs or `sym+0xOFF`, one per line.
    #[arg(long, value_name = "FILE")]
    pub hot: Option<PathBuf>,
    /// Run-time minus link-time address for a c2c report (hex; inferred when absent).
    #[arg(long, value_name = "HEX", value_parser = parse_hex)]
    pub kaslr_offset: Option<u64>,
    /// Everything on the line holding this address (hex; with --percpu, a per-CPU offset).
    #[arg(long, value_name = "ADDR", value_parser = parse_hex)]
    pub line: Option<u64>,
    /// `--line` is an offset into the per-CPU area.
    #[arg(long, requires = "line")]
    pub percpu: bool,
    /// With --struct: also mark members that straddle a line and the struct's own
    /// forced alignment (the plain listing is pahole's text, byte for byte).
    #[arg(long)]
    pub annotate: bool,
    /// Who reads and writes each member through a pointer, from the machine code and
    /// the DWARF of the build (the typed access map): for --struct, every member; for
    /// --symbol and --line, the members of each object's type there (type-level), and
    /// who reaches a per-CPU object from another CPU.
    #[arg(long)]
    pub access: bool,
    /// A static contention audit (perf c2c without running anything): the cache lines
    /// where a member frequent code writes sits beside a member other frequent code
    /// reads or writes, for global data, per-CPU data reached from other CPUs and
    /// struct types, strongest evidence first. With --struct NAME: that type only.
    /// Reads the typed access map (built on first use and cached).
    #[arg(long, conflicts_with_all = ["symbols", "line", "access", "annotate"])]
    pub contention: bool,
    /// With --contention: every contended line, not only the first screen.
    #[arg(long, requires = "contention")]
    pub all: bool,
    /// Known-hot entries to add to the built-in list or replace in it (TOML:
    /// `[[object]]`, `[[type]]`, `[[member]]`, `[[function]]`, each with name, reason,
    /// source): with --contention, the functions it names count as frequent.
    /// Repeatable.
    #[arg(long, value_name = "FILE")]
    pub hot_list: Vec<PathBuf>,
    /// Addresses from a symbol list (`System.map`, `/proc/kallsyms`): needed for a raw
    /// BTF file (`vmlinux.btf`); beside an ELF, replaces its symbol table.
    #[arg(long = "symbols", value_name = "SYSTEM.MAP")]
    pub symbol_list: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The old build.
    #[arg(required = true)]
    pub old: PathBuf,
    /// The new build.
    #[arg(required = true)]
    pub new: PathBuf,
    /// Always show these symbols in full (names or globs).
    #[arg(long = "symbol", value_name = "NAME|GLOB")]
    pub symbols: Vec<String>,
    /// Always show these structs in full (names or globs).
    #[arg(long = "struct", value_name = "NAME|GLOB")]
    pub structs: Vec<String>,
    /// Judge the lines of every changed struct by who shares them: the typed access map
    /// of both builds (machine code and DWARF) says which functions write and read each
    /// member, and how often they run decides. Built on first use (about 1.3 s more per
    /// 600 MB build) and cached; snapshots written by `layout-diff snapshot` hold it
    /// already. Without it, struct lines are not judged (the report says so).
    #[arg(long)]
    pub access: bool,
    #[command(flatten)]
    pub report: ReportArgs,
    #[command(flatten)]
    pub common: Common,
}

/// What the diff report shows and what fails it: shared by the diff and `whatif`.
#[derive(Debug, Args, Clone, Default)]
pub struct ReportArgs {
    /// Print every change, not only the first screen.
    #[arg(long)]
    pub all: bool,
    /// Lines of items in the default report (default 54, lowered until the report,
    /// every line fitted to 100 columns, is at most 80 lines); not with --all.
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub limit: Option<usize>,
    /// For one object, struct or function: the evidence, the root cause and the rule
    /// that decided its severity.
    #[arg(long, value_name = "NAME")]
    pub explain: Option<String>,
    /// Flagged categories that make exit 1, comma-separated: neighbour (a hot object
    /// gained a written neighbour), member (a struct member frequent code writes now shares
    /// a line with one other frequent code touches; needs --access), aligned (a
    /// line-aligned object no longer is), group (a cache-line group grew), text (a hot
    /// function changed phase), possible (a type guess gained a written neighbour).
    /// Default: all but possible.
    #[arg(long, value_name = "CATEGORIES", value_delimiter = ',')]
    pub fail_on: Vec<String>,
    #[command(flatten)]
    pub evidence: EvidenceArgs,
}

/// Evidence of hotness beyond the built-in list: shared by the diff, `whatif` and
/// `suggest` (`show` has its own single `--hot` and `--kaslr-offset`), read by
/// `evidence::gather`.
#[derive(Debug, Args, Clone, Default)]
pub struct EvidenceArgs {
    /// Measured hot things, recorded on OLD (repeatable, kinds mixed): `perf c2c report
    /// --stdio` (hot lines followed into NEW), `perf report --stdio --sort type,typeoff`,
    /// `perf annotate --stdio --data-type`, `perf mem report -T`, `perf report --stdio
    /// --sort sym`; or one symbol name, glob or `sym+0xOFF` per line (shown in full).
    #[arg(long, value_name = "FILE")]
    pub hot: Vec<PathBuf>,
    /// Known-hot entries to add to the built-in list or replace in it (TOML:
    /// `[[object]]`, `[[type]]`, `[[member]]`, `[[function]]`, each with name, reason,
    /// source). Repeatable.
    #[arg(long, value_name = "FILE")]
    pub hot_list: Vec<PathBuf>,
    /// Run-time minus link-time address for a perf c2c `--hot` report (hex; inferred
    /// when absent).
    #[arg(long, value_name = "HEX", value_parser = parse_hex)]
    pub kaslr_offset: Option<u64>,
}

fn parse_hex(s: &str) -> Result<u64, String> {
    let t = s.trim_start_matches("0x").trim_start_matches("0X");
    u64::from_str_radix(t, 16).map_err(|e| format!("not a hex address: {e}"))
}

fn parse_line_size(s: &str) -> Result<u64, String> {
    let n: u64 = s.parse().map_err(|e| format!("{e}"))?;
    if n.is_power_of_two() && (8..=4096).contains(&n) {
        Ok(n)
    } else {
        Err("must be a power of two between 8 and 4096".into())
    }
}

#[cfg(test)]
mod default_command_tests {
    use super::with_default_command;

    fn args(v: &[&str]) -> Vec<String> {
        let os = v.iter().map(|s| std::ffi::OsString::from(*s)).collect();
        with_default_command(os)
            .expect("no misspelled command")
            .into_iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn diff_is_inserted_before_options_that_come_first() {
        assert_eq!(
            args(&["ld", "--format", "json", "a", "b"]),
            ["ld", "diff", "--format", "json", "a", "b"]
        );
        assert_eq!(
            args(&["ld", "--all", "--format=json", "a", "b"]),
            ["ld", "diff", "--all", "--format=json", "a", "b"]
        );
        assert_eq!(args(&["ld", "a", "b"]), ["ld", "diff", "a", "b"]);
    }

    #[test]
    fn subcommands_and_bare_flags_are_left_alone() {
        assert_eq!(
            args(&["ld", "--format", "json", "show", "f"]),
            ["ld", "--format", "json", "show", "f"]
        );
        assert_eq!(args(&["ld", "show", "f"]), ["ld", "show", "f"]);
        assert_eq!(args(&["ld", "--version"]), ["ld", "--version"]);
        // Options that take a value come from clap: --hot-list's value is not a file.
        assert_eq!(
            args(&["ld", "--hot-list", "h.toml", "a", "b"]),
            ["ld", "diff", "--hot-list", "h.toml", "a", "b"]
        );
    }

    #[test]
    fn a_misspelled_subcommand_that_names_no_file_is_refused() {
        let os = |v: &[&str]| v.iter().map(|s| std::ffi::OsString::from(*s)).collect();
        assert_eq!(
            with_default_command(os(&["ld", "shwo", "x"])).unwrap_err(),
            "unknown command \"shwo\" (no such file either); did you mean \"show\"?"
        );
        assert_eq!(
            with_default_command(os(&["ld", "--all", "chekc", "x"])).unwrap_err(),
            "unknown command \"chekc\" (no such file either); did you mean \"check\"?"
        );
        // Far from every name: a file name, left to the diff to open.
        assert_eq!(
            args(&["ld", "vmlinux-6.1", "b"]),
            ["ld", "diff", "vmlinux-6.1", "b"]
        );
    }

    /// `check --help` lists every key of every rule table (read from the rules' source).
    #[test]
    fn check_help_lists_every_rule_key() {
        use clap::CommandFactory;
        let mut cmd = super::Cli::command();
        let help = cmd
            .find_subcommand_mut("check")
            .expect("check")
            .render_long_help()
            .to_string();
        let top = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let rules = "crates/core/src/check/rules.rs";
        let Ok(source) = std::fs::read_to_string(top.join(rules)) else {
            // The packaged crate (Cargo.toml.orig beside its manifest) ships without the
            // library's sources; in the workspace the file must be there.
            assert!(top.join("Cargo.toml.orig").exists(), "{rules} is missing");
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "skipped: check_help_lists_every_rule_key: {rules} is not part of the packaged crate"
            );
            return;
        };
        let mut keys = 0;
        for line in source.lines().map(str::trim) {
            let Some(rest) = line.strip_prefix("pub ") else {
                continue;
            };
            let Some((name, ty)) = rest.split_once(": ") else {
                continue;
            };
            if !(ty.starts_with("Option<") || ty.starts_with("Vec<")) || name == "why" {
                continue;
            }
            if ["structs", "symbols", "functions", "groups", "line"].contains(&name) {
                continue;
            }
            assert!(help.contains(name), "check --help does not list {name}");
            keys += 1;
        }
        // 7 struct keys, 4 symbol, 1 function, 3 group.
        assert_eq!(keys, 15);
    }
}

/// `--format`: the library's `report::Format`, spelled for the command line here so the
/// library needs no clap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
    Markdown,
    Html,
}

impl Common {
    /// Whether Rust units are read (`--lang all`).
    pub fn rust(&self) -> bool {
        self.lang == LangArg::All
    }

    /// The output format the library renders.
    pub fn format(&self) -> Format {
        match self.format {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Html => Format::Html,
        }
    }
}
