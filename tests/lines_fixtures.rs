//! End-to-end tests of the judgement of shared lines on testdata/lines/{old,new}.elf
//! (built by testdata/lines/build.sh from lines.c; hot.txt is the `--hot` list).
//! Every address, size and writer below is read from testdata/lines/FACTS.md: nm for
//! places, pahole for `struct big`, objdump for the instructions that write.

mod common;

use common::{json, run, testdata};
use serde_json::{Value, json};

fn diff() -> (i32, Value) {
    json(&[
        &testdata("lines/old.elf"),
        &testdata("lines/new.elf"),
        "--hot",
        &testdata("lines/hot.txt"),
        "--hot-list",
        &testdata("lines/frequent.toml"),
    ])
}

fn change<'a>(v: &'a Value, space: &str, name: &str) -> &'a Value {
    v[space]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {space} change {name}"))
}

/// One meeting: line, hot member and its bytes, neighbour, written member and its
/// bytes, its writer.
type Meeting = (String, String, u64, u64, String, String, u64, u64, String);

/// The new meetings of an object.
fn meetings(c: &Value) -> Vec<Meeting> {
    c["sharing"]["new_meetings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["line"].as_str().unwrap().to_string(),
                m["hot"]["name"].as_str().unwrap().to_string(),
                m["hot"]["from"].as_u64().unwrap(),
                m["hot"]["to"].as_u64().unwrap(),
                m["neighbour"].as_str().unwrap().to_string(),
                m["written"]["name"].as_str().unwrap().to_string(),
                m["written"]["from"].as_u64().unwrap(),
                m["written"]["to"].as_u64().unwrap(),
                m["written"]["written"]["function"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

#[test]
fn a_hot_counter_that_gains_a_written_neighbour_on_its_line_is_flagged() {
    // nm: fork_counter at ffffffff82a51000 (4 B) in both; other_stat at
    // ffffffff82a51008 (8 B) in NEW only; objdump: other_update stores %rdi to it.
    let (code, v) = diff();
    assert_eq!(code, 1);
    let c = change(&v, "data", "fork_counter");
    assert_eq!(c["severity"], "hot_neighbour");
    assert_eq!(
        meetings(c),
        vec![(
            "0xffffffff82a51000".into(),
            "fork_counter".into(),
            0,
            4,
            "other_stat".into(),
            "other_stat".into(),
            0,
            8,
            "other_update".into()
        )]
    );
    assert_eq!(c["written_neighbours"], json!(["other_stat"]));
}

#[test]
fn a_cold_tail_that_gains_a_neighbour_is_not_flagged() {
    // nm: big_obj at ffffffff82a510c0 (96 B): pahole puts refs at 0 (line ...0c0) and
    // cold_tail at 64..96 (line ...100); tail_stat joins ...120 in NEW, written by
    // tail_update. refs' line and its pair (...080: pad_b, never written) stay free.
    let (_, v) = diff();
    let c = change(&v, "data", "big_obj");
    assert_eq!(c["flagged"], false);
    assert_eq!(c["severity"], "hot_changed");
    assert_eq!(meetings(c), vec![]);
    let hot = &c["sharing"]["new"]["hot"];
    assert_eq!(
        hot,
        &json!([{"line": "0xffffffff82a510c0", "alone": true, "member": {
        "name": "refs", "from": 0, "to": 4, "hot": {"why": "write_type", "evidence": {
            "strength": "measured",
            "what": format!("measured: --hot list (named in {})", testdata("lines/hot.txt"))
        }}}}])
    );
    let line = &c["sharing"]["new"]["shared"][0];
    assert_eq!(line["start"], "0xffffffff82a51100");
    assert_eq!(line["tenants"][1]["name"], "tail_stat");
    assert_eq!(
        line["tenants"][1]["members"][0]["written"]["function"],
        "tail_update"
    );
}

#[test]
fn a_per_cpu_counter_written_with_this_cpu_inc_is_flagged_naming_both_writers() {
    // nm: pcp_events at per-CPU 0 (8 B), pcp_other at 8 in NEW; objdump:
    // tick_account `incq %gs:..(%rip) # 0 <pcp_events>`, other_cpu_update the same
    // on `8 <pcp_other>`. tick_account is hot by the --hot list.
    let (code, v) = diff();
    assert_eq!(code, 1);
    let c = change(&v, "percpu", "pcp_events");
    assert_eq!(c["severity"], "hot_neighbour");
    assert_eq!(
        c["evidence"]["what"],
        "code: written by tick_account(), which is measured hot"
    );
    assert_eq!(
        meetings(c),
        vec![(
            "0x0".into(),
            "pcp_events".into(),
            0,
            8,
            "pcp_other".into(),
            "pcp_other".into(),
            0,
            8,
            "other_cpu_update".into()
        )]
    );
    let m = &c["sharing"]["new_meetings"][0];
    assert_eq!(m["hot"]["hot"]["function"], "tick_account");
    assert_eq!(m["written"]["written"]["how"], "read_write");
}

#[test]
fn the_text_report_names_the_line_both_members_and_the_writers() {
    let (code, out, _) = run(&[
        &testdata("lines/old.elf"),
        &testdata("lines/new.elf"),
        "--hot",
        &testdata("lines/hot.txt"),
        "--hot-list",
        &testdata("lines/frequent.toml"),
    ]);
    assert_eq!(code, 1);
    for needle in [
        "      line ffffffff82a51000: hot fork_counter 0x0..0x4 with other_stat's other_stat 0x0..0x8,\n          written by other_update() (frequent: called by _start())\n",
        "      line percpu+0x0: hot pcp_events 0x0..0x8 (written by tick_account()) with pcp_other's\n          pcp_other 0x0..0x8, written by other_cpu_update() (frequent: called by _start())\n",
        "exit 1: 2 changes flagged on evidence, 2 in --fail-on",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    assert!(!out.contains(
        "big_obj (struct big, 96 B)  ffffffff82a510c0 -> ffffffff82a510c0 (+0x0)  [flagged"
    ));
}

#[test]
fn explain_shows_each_shared_line_member_by_member() {
    let (_, out, _) = run(&[
        &testdata("lines/old.elf"),
        &testdata("lines/new.elf"),
        "--hot",
        &testdata("lines/hot.txt"),
        "--hot-list",
        &testdata("lines/frequent.toml"),
        "--explain",
        "big_obj",
    ]);
    for needle in [
        "  hot members after: refs 0x0..0x4 on line ffffffff82a510c0 (alone)\n",
        // pahole: cold_tail at 64, 32 B.
        "    line ffffffff82a51100\n      big_obj 0x40..0x60: cold_tail 0x40..0x60\n      tail_stat 0x0..0x8: tail_stat 0x0..0x8 (written by tail_update() (frequent: called by _start()))\n",
        "  new meetings of a hot member and a written member: none\n",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

/// `--explain` names every member of every object on a shared line with its bytes,
/// those no code writes too (the judgement keeps only the written ones of the other
/// objects). testdata/check/base.elf (FACTS.md: nm and pahole): root_user (struct
/// user_struct, 56 B) at ...10e0 shares line ...10c0 with types__ptrace (...10c0, 32
/// B, no members) and, across the 128-byte pair, loopback_dev (struct netdev_like at
/// ...1080), whose rx_packets cold_path() writes; line ...1100 with uidhash_lock.
#[test]
fn explain_names_every_member_on_each_shared_line() {
    let (code, out, _) = run(&[
        &testdata("check/base.elf"),
        &testdata("check/patched.elf"),
        "--explain",
        "root_user",
    ]);
    assert_eq!(code, 0);
    let shared: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "  lines shared before:")
        .take_while(|l| !l.starts_with("    meets before"))
        .collect();
    assert_eq!(
        shared,
        [
            "  lines shared before:",
            "    line ffffffff82a510c0",
            "      root_user 0x0..0x20: __count 0x0..0x4 (hot: known member); sigpending 0x4..0x8; \
             pipe_bufs 0x8..0x10; unix_inflight 0x10..0x18; uidhash_node.next 0x18..0x20",
            "      types__ptrace 0x0..0x20: types__ptrace 0x0..0x20; none written",
            "      loopback_dev 0x0..0x40: __cacheline_group_begin__tx_read 0x0..0x1; \
             tx_queue 0x0..0x8; tx_bytes 0x8..0x10; tx_flags 0x10..0x14; \
             __cacheline_group_end__tx_read 0x14..0x15; __cacheline_group_begin__rx 0x14..0x15; \
             rx_packets 0x18..0x20 (written by cold_path() (frequency unknown)); rx_bytes 0x20..0x28; \
             __cacheline_group_end__rx 0x28..0x29; ifindex 0x28..0x2c",
            "    line ffffffff82a51100",
            "      root_user 0x20..0x38: uidhash_node.pprev 0x20..0x28; uid 0x28..0x2c; locked_vm 0x30..0x38",
            "      uidhash_lock 0x0..0x8: uidhash_lock 0x0..0x8 (written by a_long_function_name_cut_by_perf_c2c() (frequency unknown))",
        ]
    );
}

#[test]
fn show_line_is_a_static_c2c_view_of_who_writes_each_tenant() {
    // objdump: fork_account `lock addl` on fork_counter, other_update `mov %rdi` to
    // other_stat (lines.c:51 and :67 by addr2line, FACTS.md).
    let (code, out, _) = run(&[
        "show",
        &testdata("lines/new.elf"),
        "--line",
        "ffffffff82a51000",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.ends_with(
            "who touches the data on this line (machine code):\n  fork_counter\n    written by:\n      fork_account  +0x0  atomic  ./lines.c:51\n    read by: none in the code\n  other_stat\n    written by:\n      other_update  +0x0  store  ./lines.c:67\n    read by: none in the code\n"
        ),
        "{out}"
    );
    let (_, v) = json(&[
        "show",
        &testdata("lines/new.elf"),
        "--percpu",
        "--line",
        "0",
    ]);
    let acc = &v["line"]["accesses"];
    assert_eq!(acc[0][0], "pcp_events");
    assert_eq!(acc[0][1]["writers"][0]["function"], "tick_account");
    assert_eq!(acc[0][1]["writers"][0]["kind"], "read_write");
    assert_eq!(acc[1][0], "pcp_other");
    assert_eq!(acc[1][1]["writers"][0]["function"], "other_cpu_update");
}

#[test]
fn show_symbol_lists_writers_with_the_member_they_touch() {
    // objdump: big_get `lock addl $0x1,...(%rip) # <big_obj>`: refs, offset 0;
    // addr2line: lines.c:56 (FACTS.md).
    let (_, v) = json(&["show", &testdata("lines/new.elf"), "--symbol", "big_obj"]);
    let w = &v["symbols"][0]["accesses"]["writers"];
    assert_eq!(
        w,
        &json!([{"function": "big_get", "kind": "atomic", "offset": 0, "member": "refs",
                 "count": 1, "insn": "0xffffffff81000010", "boot": false,
                 "source": "./lines.c:56"}])
    );
    assert_eq!(v["symbols"][0]["accesses"]["readers"], json!([]));
}

#[test]
fn the_html_map_marks_the_hot_and_the_written_bytes() {
    let (code, html, _) = run(&[
        &testdata("lines/old.elf"),
        &testdata("lines/new.elf"),
        "--hot",
        &testdata("lines/hot.txt"),
        "--hot-list",
        &testdata("lines/frequent.toml"),
        "--format",
        "html",
    ]);
    assert_eq!(code, 1);
    // A band over each neighbour's written bytes on the new map of the object it
    // meets, spelled in its title and (cut to fit) in its text: two apiece. The old
    // maps have none: nothing wrote those lines' other bytes in OLD.
    assert_eq!(
        html.matches("other_stat.other_stat written by other_update()")
            .count(),
        2
    );
    assert_eq!(
        html.matches("pcp_other.pcp_other written by other_cpu_update()")
            .count(),
        2
    );
    assert_eq!(
        html.matches("tail_stat.tail_stat written by tail_update()")
            .count(),
        2
    );
}

#[test]
fn a_neighbour_written_by_a_hot_function_is_hot_written() {
    // hot-writer.txt names other_update, the one function that stores to other_stat
    // (objdump): the meeting says so, with the evidence's strength.
    let (code, out, _) = run(&[
        &testdata("lines/old.elf"),
        &testdata("lines/new.elf"),
        "--hot",
        &testdata("lines/hot-writer.txt"),
        "--hot-list",
        &testdata("lines/frequent.toml"),
    ]);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "      line ffffffff82a51000: hot fork_counter 0x0..0x4 with other_stat's other_stat 0x0..0x8,\n          written by other_update() (frequent: measured hot)\n"
        ),
        "{out}"
    );
    let (_, v) = json(&[
        &testdata("lines/old.elf"),
        &testdata("lines/new.elf"),
        "--hot",
        &testdata("lines/hot-writer.txt"),
        "--hot-list",
        &testdata("lines/frequent.toml"),
    ]);
    let m = &change(&v, "data", "fork_counter")["sharing"]["new_meetings"][0];
    assert_eq!(m["written"]["written"]["hot"], "measured");
}

#[test]
fn the_html_row_tooltip_names_the_pair_by_its_bytes_at_any_line_size() {
    // nm: fork_counter at ffffffff82a51000, on the first line of a 128-byte pair at 64 B
    // lines, of a 256-byte pair at 128 B lines; pcp_events at per-CPU 0.
    for (size, titles) in [
        (
            "64",
            [
                "title=\"128-byte pair ffffffff82a51000 .. ffffffff82a5107f\"",
                "title=\"128-byte pair percpu+0x0 .. percpu+0x7f\"",
            ],
        ),
        (
            "128",
            [
                "title=\"256-byte pair ffffffff82a51000 .. ffffffff82a510ff\"",
                "title=\"256-byte pair percpu+0x0 .. percpu+0xff\"",
            ],
        ),
    ] {
        let (_, html, _) = run(&[
            &testdata("lines/old.elf"),
            &testdata("lines/new.elf"),
            "--hot",
            &testdata("lines/hot.txt"),
            "--hot-list",
            &testdata("lines/frequent.toml"),
            "--format",
            "html",
            "--line-size",
            size,
        ]);
        for t in titles {
            assert!(html.contains(t), "{t} missing at --line-size {size}");
        }
        // The legend names the pair's size; every row's pair is spelled by its first
        // and last byte, none by an index.
        let legend = format!(
            "a solid rule starts a {}-byte pair",
            2 * size.parse::<u64>().unwrap()
        );
        assert_eq!(html.matches(&legend).count(), 1, "{legend}");
        let titles: Vec<&str> = html
            .split("title=\"")
            .skip(1)
            .filter_map(|t| t.split('"').next())
            .filter(|t| t.contains("-byte pair "))
            .collect();
        assert!(!titles.is_empty());
        assert!(
            titles.iter().all(|t| t.contains(" .. ")),
            "a pair spelled without its bytes: {titles:?}"
        );
    }
}

/// `--explain` says what decided in the words of the report (the `--fail-on`
/// categories), never the names of the code's enums (`Group`, `HotMember`,
/// `hot_neighbour`): testdata/suggest flags struct sk_like (its tx_hot group, FACTS.md:
/// 1 line -> 2) and rm_lost (jiffies_64 now on its line).
#[test]
fn explain_decides_in_the_reports_words() {
    let explain = |name: &str| {
        let (code, out, _) = run(&[
            &testdata("suggest/old.elf"),
            &testdata("suggest/new.elf"),
            "--explain",
            name,
        ]);
        assert_eq!(code, 0);
        out
    };
    let (sk, rm) = (explain("sk_like"), explain("rm_lost"));
    assert_eq!(
        sk.lines().last(),
        Some(
            "  decided: group by rule \"a cache-line group grew beyond its lines or changed \
             members\"; flagged, and its category is in --fail-on: the diff without --explain \
             exits 1"
        )
    );
    assert_eq!(
        rm.lines().last(),
        Some(
            "  decided: neighbour by rule \"a hot member now shares a line with a member of \
             another object that frequent code writes (known or measured hot, or called \
             directly by such code), code that does not write the hot member\"; flagged, and \
             its category is in --fail-on: the diff without --explain exits 1"
        )
    );
    for leak in [
        "Group",
        "HotMember",
        "HotNeighbour",
        "hot_neighbour",
        "hot_member",
    ] {
        assert!(!sk.contains(leak) && !rm.contains(leak), "{leak}");
    }
}
