//! `--format html` rendered in a real browser: the fixture pair's diff, a fixture struct
//! and a fixture symbol, and a check, each loaded in headless Chromium (Debian's
//! `chromium`). A test fails on any console message or script error, and asserts the
//! blocks of the rendered DOM against nm and pahole facts (testdata/EXPECTED.md):
//! `root_user` shares the line ffffffff82a51240 with `types__ptrace` in old.elf and
//! starts the line ffffffff82a51280 alone in new.elf.
//!
//! Without Chromium each browser test says so and passes, unless
//! `LAYOUT_DIFF_REQUIRE_BROWSER=1` (set by `.ci/run`, which installs Chromium) makes
//! it fail. Screenshots go to `$TMPDIR/layout-diff-html/`, never into the repository.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run, testdata};

/// The browser to use: `$LAYOUT_DIFF_CHROMIUM`, else `chromium` or `chromium-browser`
/// on the `PATH`. `None` (with a message) skips, unless a browser is required.
fn chromium(test: &str) -> Option<PathBuf> {
    let named = std::env::var_os("LAYOUT_DIFF_CHROMIUM").map(PathBuf::from);
    let found = named.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .flat_map(|d| [d.join("chromium"), d.join("chromium-browser")])
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("LAYOUT_DIFF_REQUIRE_BROWSER").is_none(),
            "{test}: LAYOUT_DIFF_REQUIRE_BROWSER is set but no chromium was found (apt-get install chromium)"
        );
        eprintln!("{test}: skipped, no chromium on PATH (apt-get install chromium; .ci/run does)");
    }
    found
}

/// Where the test's HTML and screenshots go: outside the repository.
fn out_dir() -> PathBuf {
    let d = std::env::temp_dir().join("layout-diff-html");
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Loads `file` in headless Chromium; returns the DOM after scripts ran, and the
/// console messages and script errors Chromium logged. Also writes a screenshot
/// `<file>.png` at 1280x900 next to it.
fn render(browser: &Path, file: &Path) -> (String, Vec<String>) {
    let profile = tempdir_for(file);
    let url = format!("file://{}", file.display());
    let base = |extra: &[&str]| {
        let mut c = Command::new(browser);
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            &format!("--user-data-dir={}", profile.display()),
        ]);
        c.args(extra);
        c.arg(&url);
        c.output().expect("chromium runs")
    };
    let dom = base(&["--dump-dom"]);
    assert!(
        dom.status.success(),
        "chromium failed on {}",
        file.display()
    );
    let shot = file.with_extension("png");
    base(&[
        &format!("--screenshot={}", shot.display()),
        "--window-size=1280,900",
        "--hide-scrollbars",
    ]);
    let log = String::from_utf8_lossy(&dom.stderr).into_owned();
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE(") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&dom.stdout).into_owned(), console)
}

fn tempdir_for(file: &Path) -> PathBuf {
    let d = file.with_extension("profile");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("profile dir");
    d
}

/// Writes the binary's HTML for `args` to `name` in the output directory.
fn page(name: &str, args: &[&str], code: i32) -> PathBuf {
    let (got, out, err) = run(args);
    assert_eq!(got, code, "{err}");
    let path = out_dir().join(name);
    std::fs::write(&path, out).expect("write html");
    path
}

/// Rendered without a console message or a script error, every block drawn at its
/// offset (the page's script checks and records mismatches in `#js-errors`), and the
/// script ran to its end (it counts the blocks into `data-ready`).
fn assert_clean(dom: &str, console: &[String], source: &str) {
    assert!(console.is_empty(), "console: {console:#?}");
    assert!(
        dom.contains("<pre id=\"js-errors\"></pre>"),
        "errors recorded in the page: {}",
        between(dom, "<pre id=\"js-errors\">", "</pre>")
    );
    let cells = source.matches("<div class=\"cell").count();
    assert!(
        dom.contains(&format!("data-ready=\"{cells}\"")),
        "the page script did not finish (expected data-ready=\"{cells}\")"
    );
}

/// The rows of the maps in `html`: (data-line, names of the blocks on it), in order.
fn rows(html: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for chunk in html.split("<div class=\"row ").skip(1) {
        let line = attr(chunk, "data-line").unwrap_or_default();
        let mut names = Vec::new();
        for cell in chunk.split("<div class=\"cell").skip(1) {
            if let Some(n) = attr(cell, "data-name") {
                names.push(n);
            }
        }
        out.push((line, names));
    }
    out
}

/// The value of the first `key="..."` in `s`.
fn attr(s: &str, key: &str) -> Option<String> {
    let at = s.find(&format!("{key}=\""))? + key.len() + 2;
    let end = s[at..].find('"')?;
    Some(s[at..at + end].to_string())
}

/// The part of `html` from `start` to the next `end` after it.
fn between<'h>(html: &'h str, start: &str, end: &str) -> &'h str {
    let a = html
        .find(start)
        .unwrap_or_else(|| panic!("{start} not found"));
    let rest = &html[a..];
    match rest[start.len()..].find(end) {
        Some(b) => &rest[..start.len() + b],
        None => rest,
    }
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn diff_html_shows_root_user_with_types_ptrace_before_and_alone_after() {
    let Some(browser) = chromium("diff_html") else {
        return;
    };
    let (old, new) = (testdata("old.elf"), testdata("new.elf"));
    // Nothing is flagged on evidence on the fixture pair; struct mce is asked for.
    let file = page(
        "diff.html",
        &[&old, &new, "--format", "html", "--struct", "mce"],
        0,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let (dom, console) = render(&browser, &file);
    assert_clean(&dom, &console, &source);
    let item = between(
        &dom,
        "<details class=\"item\" data-name=\"root_user\"",
        "</details>",
    );
    let before = rows(between(item, "<div class=\"old\">", "<div class=\"new\">"));
    let after = rows(between(item, "<div class=\"new\">", "</details>"));
    // nm old.elf: types__ptrace ffffffff82a51240 (32 B), root_user ffffffff82a51260 (136 B).
    assert_eq!(
        before,
        vec![
            (
                "ffffffff82a51240".to_string(),
                names(&["types__ptrace", "root_user"])
            ),
            ("ffffffff82a51280".to_string(), names(&["root_user"])),
            ("ffffffff82a512c0".to_string(), names(&["root_user"])),
        ]
    );
    // nm new.elf: root_user ffffffff82a51280 (192 B, ____cacheline_aligned): alone.
    assert_eq!(
        after,
        vec![
            ("ffffffff82a51280".to_string(), names(&["root_user"])),
            ("ffffffff82a512c0".to_string(), names(&["root_user"])),
            ("ffffffff82a51300".to_string(), names(&["root_user"])),
        ]
    );
    // The same sections as the text report, in its order.
    let kinds: Vec<String> = dom
        .split("<section class=\"sec\" data-kind=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next().map(str::to_string))
        .collect();
    assert_eq!(kinds, names(&["Causes", "Structs", "Text", "Improvements"]));
    // struct mce gained kflags at 120 (pahole new.elf), drawn as added on line 1.
    let mce = between(
        &dom,
        "<details class=\"item\" data-name=\"mce\"",
        "</details>",
    );
    let mce_new = rows(between(mce, "<div class=\"new\">", "</details>"));
    // Asked for by --struct, every member is drawn: kflags ends line 1 (bytes 64..127).
    assert_eq!(mce_new[1].0, "64");
    assert_eq!(mce_new[1].1.last().map(String::as_str), Some("kflags"));
    assert_eq!(mce_new[1].1.len(), 13);
    assert!(mce.contains("class=\"cell item added\""));
}

#[test]
fn struct_html_draws_members_holes_and_bitfield_units() {
    let Some(browser) = chromium("struct_html") else {
        return;
    };
    let file = page(
        "struct.html",
        &[
            "show",
            &testdata("old.elf"),
            "--struct",
            "user_struct",
            "--struct",
            "task_struct",
            "--format",
            "html",
        ],
        0,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let (dom, console) = render(&browser, &file);
    assert_clean(&dom, &console, &source);
    // pahole -C user_struct old.elf: __count 0, 4 B hole, epoll_watches 8, unix_inflight
    // 48, pipe_bufs 56 | uidhash_node 64, uid 80, hole, locked_vm 88, ratelimit 96..136.
    let user = rows(between(
        &dom,
        "<section class=\"sec struct\" data-name=\"user_struct\"",
        "</section>",
    ));
    assert_eq!(
        user,
        vec![
            (
                "0".to_string(),
                names(&[
                    "__count",
                    "epoll_watches",
                    "unix_inflight",
                    "pipe_bufs",
                    "hole 4"
                ])
            ),
            (
                "64".to_string(),
                names(&["uidhash_node", "uid", "locked_vm", "ratelimit", "hole 4"])
            ),
            ("128".to_string(), names(&["ratelimit"])),
        ]
    );
    // pahole -C task_struct: restart_flags:20 at 48, brk_randomized:3 and in_lru_fault:7
    // at 50 share storage: one block with three bit ranges.
    let task = between(
        &dom,
        "<section class=\"sec struct\" data-name=\"task_struct\"",
        "</section>",
    );
    let row0 = &rows(task)[0];
    assert_eq!(row0.0, "0");
    assert!(
        row0.1
            .contains(&"restart_flags:20, brk_randomized:3, in_lru_fault:7".to_string())
    );
    let unit = between(
        task,
        "data-name=\"restart_flags:20, brk_randomized:3, in_lru_fault:7\"",
        "</div>",
    );
    assert_eq!(unit.matches("class=\"bit\"").count(), 3);
}

#[test]
fn symbol_html_puts_root_user_and_its_co_tenant_on_one_row() {
    let Some(browser) = chromium("symbol_html") else {
        return;
    };
    let file = page(
        "symbol.html",
        &[
            "show",
            &testdata("old.elf"),
            "--symbol",
            "root_user",
            "--format",
            "html",
        ],
        0,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let (dom, console) = render(&browser, &file);
    assert_clean(&dom, &console, &source);
    let all = rows(&dom);
    // First map: the symbol's lines; second: its type laid at ffffffff82a51260.
    assert_eq!(
        all[0],
        (
            "ffffffff82a51240".to_string(),
            names(&["types__ptrace", "root_user"])
        )
    );
    assert_eq!(
        all[3],
        (
            "ffffffff82a51240".to_string(),
            names(&["__count", "epoll_watches", "hole 4"])
        )
    );
}

#[test]
fn check_html_lists_failures_with_their_offenders() {
    let Some(browser) = chromium("check_html") else {
        return;
    };
    let file = page(
        "check.html",
        &[
            "check",
            "--rules",
            &testdata("check/rules/root_user.toml"),
            &testdata("check/base.elf"),
            "--format",
            "html",
        ],
        1,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let (dom, console) = render(&browser, &file);
    assert_clean(&dom, &console, &source);
    assert_eq!(dom.matches("data-pass=\"false\"").count(), 2);
    // testdata/check/FACTS.md: types__ptrace ffffffff82a510c0, root_user ffffffff82a510e0
    // (56 B), uidhash_lock ffffffff82a51118.
    let alone = between(&dom, "alone = true", "</tr>");
    assert_eq!(
        rows(alone),
        vec![
            (
                "ffffffff82a510c0".to_string(),
                names(&["types__ptrace", "root_user"])
            ),
            (
                "ffffffff82a51100".to_string(),
                names(&["root_user", "uidhash_lock"])
            ),
        ]
    );
}

/// A failing `alone` or `not_with` rule draws the object checked on its lines, marked
/// apart from the offenders (the focus class, and a legend entry), not blank space.
#[test]
fn check_html_draws_the_checked_object_among_its_offenders() {
    let Some(browser) = chromium("check_subject_html") else {
        return;
    };
    let rules = out_dir().join("not_with.toml");
    std::fs::write(
        &rules,
        "[symbol.root_user]\nalone = true\nnot_with = [\"uidhash_lock\"]\n",
    )
    .unwrap();
    let file = page(
        "check-subject.html",
        &[
            "check",
            "--rules",
            rules.to_str().unwrap(),
            &testdata("check/base.elf"),
            "--format",
            "html",
        ],
        1,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let (dom, console) = render(&browser, &file);
    assert_clean(&dom, &console, &source);
    assert!(dom.contains("</span> the object checked</span>"), "legend");
    assert!(
        dom.contains("</span> an object or member at fault</span>"),
        "legend"
    );
    // FACTS.md: root_user ffffffff82a510e0 (56 B) runs into the line of uidhash_lock.
    let not_with = between(&dom, "not_with = [", "</tr>");
    assert_eq!(
        rows(not_with),
        vec![(
            "ffffffff82a51100".to_string(),
            names(&["root_user", "uidhash_lock"])
        )]
    );
    let alone = between(&dom, "alone = true", "</tr>");
    assert_eq!(alone.matches("class=\"cell item focus cont\"").count(), 1);
    assert_eq!(alone.matches("class=\"cell item focus\"").count(), 1);
    // The offenders are plain blocks: types__ptrace and uidhash_lock.
    assert_eq!(alone.matches("class=\"cell item\" style=").count(), 2);
}

/// A `whatif` page says it is a prediction before anything else: the "predicted, not
/// built" panel comes before the verdict, the summary and the first report section.
#[test]
fn whatif_html_says_predicted_before_the_report() {
    let Some(browser) = chromium("whatif_html") else {
        return;
    };
    let file = page(
        "whatif.html",
        &[
            "whatif",
            &testdata("whatif/base.elf"),
            "--struct",
            "rec=+8",
            "--format",
            "html",
        ],
        0,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let (dom, console) = render(&browser, &file);
    assert_clean(&dom, &console, &source);
    let at = |needle: &str| {
        dom.find(needle)
            .unwrap_or_else(|| panic!("{needle} not in the page"))
    };
    let panel = at("id=\"predicted\"");
    assert!(panel < at("id=\"verdict\""), "panel after the verdict");
    assert!(
        panel < at("<table class=\"summary\""),
        "panel after the summary"
    );
    assert!(
        panel < at("<section class=\"sec\""),
        "panel after a section"
    );
    assert!(
        between(&dom, "id=\"predicted\"", "</section>")
            .contains("Predicted, not built: struct rec +8 B")
    );
    assert_eq!(dom.matches("Predicted, not built").count(), 1);
}

/// suggest's page loads clean: a section per item (groups rx_hot and tx_hot, then
/// rm_lost on testdata/suggest), each fix's C in a code block.
#[test]
fn suggest_html_has_a_section_per_item() {
    let Some(browser) = chromium("suggest_html") else {
        return;
    };
    let file = page(
        "suggest.html",
        &[
            "suggest",
            &testdata("suggest/old.elf"),
            &testdata("suggest/new.elf"),
            "--format",
            "html",
        ],
        0,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let (dom, console) = render(&browser, &file);
    assert_clean(&dom, &console, &source);
    assert_eq!(dom.matches("<section class=\"suggestion\">").count(), 3);
    assert!(
        between(&dom, "<h2>rm_lost", "</section>")
            .contains("<pre class=\"code\">int rm_lost __read_mostly;  /* with its initializer, if it has one */</pre>")
    );
}

/// The verdict (the exit status line, and which --fail-on categories fail) opens the
/// diff and check pages, before the summary and the first rule; it also closes them.
#[test]
fn verdict_is_at_the_top_of_diff_and_check_pages() {
    // tests/evidence_fixtures.rs: this pair with this profile exits 1.
    let (code, out, err) = run(&[
        &testdata("evidence/old.elf"),
        &testdata("evidence/new.elf"),
        "--hot",
        &testdata("evidence/perf-type.txt"),
        "--format",
        "html",
    ]);
    assert_eq!(code, 1, "{err}");
    let verdict = between(&out, "<p class=\"closing\" id=\"verdict\">", "</p>");
    assert!(verdict.contains(">exit 1: 4 changes flagged on evidence, 4 in --fail-on"));
    let failing = between(&out, "<p class=\"closing\" id=\"failing\">", "</p>");
    // Every failing change in a category, the counts adding up to the 4.
    let counts: usize = failing
        .split(": ")
        .nth(1)
        .unwrap()
        .split(", ")
        .map(|p| p.rsplit(' ').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(counts, 4, "{failing}");
    assert!(!failing.contains("more"), "{failing}");
    let top = out.find("id=\"verdict\"").unwrap();
    assert!(top < out.find("id=\"failing\"").unwrap());
    assert!(out.find("id=\"failing\"").unwrap() < out.find("<table class=\"summary\"").unwrap());
    assert!(top < out.find("<section class=\"sec\"").unwrap());
    assert_eq!(
        out.matches(">exit 1: 4 changes flagged").count(),
        2,
        "top and bottom"
    );

    let (code, out, err) = run(&[
        "check",
        "--rules",
        &testdata("check/rules/root_user.toml"),
        &testdata("check/base.elf"),
        "--format",
        "html",
    ]);
    assert_eq!(code, 1, "{err}");
    let top = out
        .find("<p class=\"closing\" id=\"verdict\">2 of 2 rules fail (exit 1)</p>")
        .expect("verdict at the top");
    assert!(top < out.find("<table class=\"rules\"").unwrap());
    assert_eq!(out.matches("2 of 2 rules fail (exit 1)").count(), 2);
}

/// Lines that hold the middle of one large object, and nothing else, are one row
/// that says how many lines it stands for, not a row each that repeats its name.
/// testdata/whatif/FACTS.md: b_log ffffffff82a51140, 0x138 B (5 lines, the last
/// ffffffff82a51240), nothing else on its lines.
#[test]
fn a_large_object_is_one_row_over_its_middle_lines() {
    let Some(browser) = chromium("large_object_html") else {
        return;
    };
    let file = page(
        "b_log.html",
        &[
            "show",
            &testdata("whatif/base.elf"),
            "--symbol",
            "b_log",
            "--format",
            "html",
        ],
        0,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let (dom, console) = render(&browser, &file);
    assert_clean(&dom, &console, &source);
    let map = between(&dom, "<figure class=\"map\">", "</figure>");
    assert_eq!(
        rows(map),
        vec![
            ("ffffffff82a51140".to_string(), names(&["b_log"])),
            ("ffffffff82a51180".to_string(), names(&["b_log"])),
            ("ffffffff82a51240".to_string(), names(&["b_log"])),
        ]
    );
    let run = between(map, "<div class=\"row run", "</div></div>");
    assert!(run.contains("data-lines=\"3\""), "{run}");
    assert!(
        run.contains("title=\"3 lines, ffffffff82a51180 to ffffffff82a51200\""),
        "{run}"
    );
    assert!(run.contains(">b_log \u{2192} (3 lines)</span>"), "{run}");
}

/// The legend lists the marks the page's maps use and no others: `show --symbol` has
/// no write-hot, added, removed or changed block; `show --struct` no focus either.
#[test]
fn show_legend_lists_only_marks_on_the_page() {
    let legend = |args: &[&str]| {
        let (code, out, err) = run(args);
        assert_eq!(code, 0, "{err}");
        between(&out, "<p class=\"legend\">", "</p>").to_string()
    };
    let old = testdata("old.elf");
    let symbol = legend(&["show", &old, "--symbol", "root_user", "--format", "html"]);
    assert!(
        symbol.contains("</span> the object shown</span>"),
        "{symbol}"
    );
    assert!(
        symbol.contains("</span> hole or padding</span>"),
        "{symbol}"
    );
    for absent in ["write-hot", "> added<", "> removed<", "> changed<"] {
        assert!(!symbol.contains(absent), "{absent} in {symbol}");
    }
    let strukt = legend(&["show", &old, "--struct", "user_struct", "--format", "html"]);
    assert!(
        strukt.contains("</span> hole or padding</span>"),
        "{strukt}"
    );
    for absent in [
        "the object shown",
        "write-hot",
        "> added<",
        "> removed<",
        "> changed<",
    ] {
        assert!(!strukt.contains(absent), "{absent} in {strukt}");
    }
    // user_struct's rows are one line each; b_log's map has a row for 3 lines
    // (`a_large_object_is_one_row_over_its_middle_lines`): its legend says what such
    // a row is.
    assert!(
        strukt.contains("<span>rows: one cache line each</span>"),
        "{strukt}"
    );
    let b_log = legend(&[
        "show",
        &testdata("whatif/base.elf"),
        "--symbol",
        "b_log",
        "--format",
        "html",
    ]);
    assert!(
        b_log.contains(
            "<span>rows: one cache line each, or (\u{22ee}) a run of lines that hold only the middle of one block, or nothing</span>"
        ),
        "{b_log}"
    );
    // The diff keeps every key: its maps can draw each of them.
    let (_, diff, _) = run(&[&old, &testdata("new.elf"), "--format", "html"]);
    let all = between(&diff, "<p class=\"legend\">", "</p>");
    for key in [
        "the object shown",
        "write-hot",
        "> added<",
        "> removed<",
        "> changed<",
        "hole or padding",
    ] {
        assert!(all.contains(key), "{key} not in {all}");
    }
}

/// No label is cut to a sliver: a block's label fits, or ends in an ellipsis, or is
/// hidden when the block is too narrow for one letter and the ellipsis (the block's
/// title names it). struct mce's 1-byte members (cpuvendor, inject_flags, severity,
/// pad at 56..59; cs, bank, cpu, finished at 64..67) are a few pixels wide side by side.
#[test]
fn labels_fit_their_blocks_or_are_hidden() {
    let Some(browser) = chromium("labels_html") else {
        return;
    };
    let file = page(
        "labels.html",
        &[
            &testdata("old.elf"),
            &testdata("new.elf"),
            "--format",
            "html",
            "--struct",
            "mce",
        ],
        0,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    // Measures every drawn label against its block: cut when wider than the room and
    // the room is less than one letter and an ellipsis.
    let probe = r#"<script>(function () {
  var cut = [], hidden = 0, n = 0, ctx = document.createElement('canvas').getContext('2d');
  document.querySelectorAll('details.item').forEach(function (d) { d.open = true; });
  document.querySelectorAll('.lane .cell').forEach(function (c) {
    var t = c.querySelector('.txt'), cs = getComputedStyle(c), ts = getComputedStyle(t);
    n++;
    if (ts.visibility === 'hidden' || ts.display === 'none') { hidden++; return; }
    ctx.font = ts.font;
    var room = c.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (t.getBoundingClientRect().width > room + 0.5 && room < ctx.measureText('x\u2026').width) {
      cut.push(c.dataset.name);
    }
  });
  document.body.dataset.labels = n + ' ' + hidden;
  document.body.dataset.cut = cut.join(',');
})();</script></body>"#;
    std::fs::write(&file, source.replace("</body>", probe)).unwrap();
    let (dom, console) = render(&browser, &file);
    assert!(console.is_empty(), "{console:#?}");
    assert!(
        dom.contains("data-cut=\"\""),
        "labels cut: {}",
        attr(&dom, "data-cut").unwrap_or_default()
    );
    let labels = attr(&dom, "data-labels").expect("probe ran");
    let hidden: usize = labels.split(' ').nth(1).unwrap().parse().unwrap();
    assert!(hidden > 0, "no label hidden ({labels})");
    // Hidden labels keep the name in the block's title.
    assert!(source.contains("data-name=\"cpuvendor\" data-detail=\"cpuvendor | __u8 | at 56 | 1 B\" title=\"cpuvendor | __u8 | at 56 | 1 B\""));
}

/// Labels under a row never cover each other: the page stacks them on as many
/// levels as they need. The fixture diff's first row of root_user (old) with three
/// more point labels at 40, 41 and 42 % of the line, where two levels used to hold
/// four labels in turn, the first and third on top of each other.
#[test]
fn labels_under_a_row_do_not_overlap() {
    let Some(browser) = chromium("band_labels_html") else {
        return;
    };
    let file = page(
        "bands.html",
        &[
            &testdata("old.elf"),
            &testdata("new.elf"),
            "--format",
            "html",
        ],
        0,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let item = source
        .find("<details class=\"item\" data-name=\"root_user\"")
        .expect("root_user item");
    let at = item + source[item..].find("<div class=\"bands\">").unwrap() + 20;
    let pins: String = ["40", "41", "42"]
        .iter()
        .enumerate()
        .map(|(i, left)| {
            format!(
                "<span class=\"band pin{}\" style=\"left:{left}%\" title=\"x\">.a_long_member_name_{i} line 1</span>",
                if i % 2 == 0 { " lo" } else { "" }
            )
        })
        .collect();
    let probe = r#"<script>(function () {
  var overlaps = [];
  document.querySelectorAll('details.item').forEach(function (d) { d.open = true; });
  document.querySelectorAll('.bands').forEach(function (bands) {
    var r = Array.prototype.map.call(bands.querySelectorAll('.band'), function (b) { return [b.textContent, b.getBoundingClientRect()]; });
    var box = bands.getBoundingClientRect();
    r.forEach(function (a, i) {
      if (a[1].bottom > box.bottom + 0.5) { overlaps.push(a[0] + ' below its row'); }
      r.slice(i + 1).forEach(function (b) {
        var x = a[1], y = b[1];
        if (x.left < y.right && y.left < x.right && x.top < y.bottom && y.top < x.bottom) { overlaps.push(a[0] + ' / ' + b[0]); }
      });
    });
  });
  document.body.dataset.overlaps = overlaps.join('; ');
})();</script></body>"#;
    let page_with_pins =
        format!("{}{pins}{}", &source[..at], &source[at..]).replace("</body>", probe);
    std::fs::write(&file, page_with_pins).unwrap();
    let (dom, console) = render(&browser, &file);
    assert!(console.is_empty(), "{console:#?}");
    assert!(dom.contains("<pre id=\"js-errors\"></pre>"));
    assert!(
        dom.contains("data-overlaps=\"\""),
        "{}",
        attr(&dom, "data-overlaps").unwrap_or_default()
    );
}

/// The console check itself can fail: a page whose script throws is caught.
#[test]
fn a_script_error_is_caught() {
    let Some(browser) = chromium("a_script_error_is_caught") else {
        return;
    };
    let file = out_dir().join("broken.html");
    std::fs::write(
        &file,
        "<!DOCTYPE html><html><body><script>no_such_function();</script></body></html>",
    )
    .unwrap();
    let (_, console) = render(&browser, &file);
    assert!(
        console.iter().any(|l| l.contains("no_such_function")),
        "{console:#?}"
    );
}

/// Self-contained: nothing is fetched (no external script, style, image or font).
#[test]
fn html_fetches_nothing() {
    let (old, new) = (testdata("old.elf"), testdata("new.elf"));
    for args in [
        vec![old.as_str(), new.as_str(), "--format", "html", "--all"],
        vec![
            "show",
            old.as_str(),
            "--symbol",
            "root_user",
            "--format",
            "html",
        ],
    ] {
        let (_, out, err) = run(&args);
        assert!(out.starts_with("<!DOCTYPE html>"), "{err}");
        for needle in ["src=", "href=", "@import", "url(", "http://", "https://"] {
            assert!(!out.contains(needle), "{needle} in {args:?}");
        }
    }
}

/// The real Debian 6.1 cloud pair (ignored by default, as tests/real_vmlinux.rs:
/// `LAYOUT_DIFF_OLD`/`LAYOUT_DIFF_NEW`, else bench/cache from bench/fetch-vmlinux.sh).
/// nm: 6.1.170 types__ptrace ffffffff82a51bc0 (32 B), root_user ffffffff82a51be0
/// (136 B); 6.1.176 root_user ffffffff82a51bc0, init_user_ns ffffffff82a51c60.
#[test]
#[ignore = "needs the real vmlinux pair (bench/fetch-vmlinux.sh)"]
fn real_pair_html_is_small_self_contained_and_shows_root_user() {
    let real = |var: &str, pkg: &str| {
        std::env::var(var)
            .unwrap_or_else(|_| format!("{}/bench/cache/{pkg}/vmlinux", env!("CARGO_MANIFEST_DIR")))
    };
    let old = real("LAYOUT_DIFF_OLD", "linux-image-6.1.0-47-cloud-amd64-dbg");
    let new = real("LAYOUT_DIFF_NEW", "linux-image-6.1.0-50-cloud-amd64-dbg");
    let file = page("real.html", &[&old, &new, "--format", "html"], 1);
    let source = std::fs::read_to_string(&file).unwrap();
    assert!(source.len() < 3_000_000, "{} bytes", source.len());
    for needle in ["src=", "href=", "url(", "http://", "https://"] {
        assert!(!source.contains(needle), "{needle}");
    }
    let check = |html: &str| {
        let item = between(
            html,
            "<details class=\"item\" data-name=\"root_user\"",
            "</details>",
        );
        let before = rows(between(item, "<div class=\"old\">", "<div class=\"new\">"));
        let after = rows(between(item, "<div class=\"new\">", "</details>"));
        assert_eq!(
            before[0],
            (
                "ffffffff82a51bc0".to_string(),
                names(&["ptrace.c:types__ptrace", "root_user"])
            )
        );
        assert_eq!(
            after[2],
            (
                "ffffffff82a51c40".to_string(),
                names(&["init_user_ns", "root_user"])
            )
        );
    };
    check(&source);
    if let Some(browser) = chromium("real_pair_html") {
        let (dom, console) = render(&browser, &file);
        assert_clean(&dom, &console, &source);
        check(&dom);
    }
}

/// `show` draws only structs and symbols in HTML; the rest is refused with one line.
#[test]
fn show_html_without_struct_or_symbol_is_refused() {
    let (code, out, err) = run(&["show", &testdata("old.elf"), "--format", "html"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(
        err,
        "layout-diff: show --format html draws --struct and --symbol; use --format text or json for the summary, --line, --contention and a perf c2c --hot\n"
    );
}

/// The page is the same with one thread or two (sorted before drawing).
#[test]
fn html_does_not_depend_on_thread_count() {
    let (old, new) = (testdata("old.elf"), testdata("new.elf"));
    let args = [old.as_str(), new.as_str(), "--format", "html", "--all"];
    let one = common::run_env(&args, &[("RAYON_NUM_THREADS", "1")]);
    let two = common::run_env(&args, &[("RAYON_NUM_THREADS", "2")]);
    // The fixture pair flags nothing on evidence (process_counts' new neighbours hold no lock, atomic or evidence).
    assert_eq!(one.0, 0, "{}", one.2);
    assert!(one.1 == two.1, "pages differ between 1 and 2 threads");
}

/// Per-CPU rows are labelled by offset as the text prints them (nm old.elf: mces_seen
/// at .data..percpu + 0x10e0, 120 B, on the lines at 0x10c0, 0x1100 and 0x1140).
#[test]
fn percpu_rows_are_labelled_by_offset() {
    let (code, out, err) = run(&[
        "show",
        &testdata("old.elf"),
        "--symbol",
        "mces_seen",
        "--format",
        "html",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<String> = rows(&out).into_iter().take(3).map(|r| r.0).collect();
    assert_eq!(
        lines,
        names(&["percpu+0x10c0", "percpu+0x1100", "percpu+0x1140"])
    );
}

/// Cache-line groups are bands under the rows (testdata/check/FACTS.md, pahole -C
/// netdev_like base.elf: tx_read from 0 to its end marker at 20, rx from 20 to 40; 4 B
/// hole at 20, 20 B padding); the zero-size markers are not blocks.
#[test]
fn groups_are_bands_and_markers_are_not_blocks() {
    let Some(browser) = chromium("groups_html") else {
        return;
    };
    let file = page(
        "groups.html",
        &[
            "show",
            &testdata("check/base.elf"),
            "--struct",
            "netdev_like",
            "--format",
            "html",
        ],
        0,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let (dom, console) = render(&browser, &file);
    assert_clean(&dom, &console, &source);
    assert!(dom.contains("<h2>struct netdev_like (64 B, 1 line)</h2>"));
    assert_eq!(
        rows(&dom),
        vec![(
            "0".to_string(),
            names(&[
                "tx_queue",
                "tx_bytes",
                "tx_flags",
                "rx_packets",
                "rx_bytes",
                "ifindex",
                "hole 4",
                "padding 20"
            ])
        )]
    );
    // 20 of 64 bytes from 0, and 20 from 20 (31.25 % each).
    assert!(dom.contains("style=\"left:0.0000%;width:31.2500%\" title=\"group tx_read (20 B)\""));
    assert!(dom.contains("style=\"left:31.2500%;width:31.2500%\" title=\"group rx (20 B)\""));
}

/// Focusing a block (as Tab does) shows its name, type, offset and size in the details
/// panel: the symbol page with one line appended that focuses the first block.
#[test]
fn focusing_a_block_shows_its_details() {
    let Some(browser) = chromium("focus_html") else {
        return;
    };
    let file = page(
        "focus.html",
        &[
            "show",
            &testdata("old.elf"),
            "--symbol",
            "root_user",
            "--format",
            "html",
        ],
        0,
    );
    let source = std::fs::read_to_string(&file).unwrap();
    let focused = source.replace(
        "</body>",
        "<script>document.querySelector('.lane .cell').focus()</script></body>",
    );
    std::fs::write(&file, focused).unwrap();
    let (dom, console) = render(&browser, &file);
    assert!(console.is_empty(), "{console:#?}");
    // nm old.elf: types__ptrace ffffffff82a51240, 32 B.
    assert!(
        dom.contains(
            "<div id=\"inspector\" role=\"status\" aria-live=\"polite\">types__ptrace | co-tenant | at ffffffff82a51240 | 32 B</div>"
        ),
        "{}",
        between(&dom, "<div id=\"inspector\"", "</div>")
    );
}

/// A build against itself: exit 0 and a page that says so.
#[test]
fn identical_builds_give_a_no_changes_page() {
    let old = testdata("old.elf");
    let (code, out, err) = run(&[&old, &old, "--format", "html"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("<p id=\"no-changes\">no changes</p>"));
    assert!(out.ends_with("</body></html>\n"));
}
