//! `whatif` and `suggest` on testdata/whatif: three units linked the kernel's way,
//! built six times (testdata/whatif/build.sh). Each prediction from base.elf must
//! put every data object where gcc and ld put it in the variant built with the
//! change: the variants are the measurement, not numbers written here by hand.

mod common;

use common::{load_image as load, object_places as places, run, testdata};
use layout_diff_core::model::SymbolKind;
use layout_diff_core::whatif::{Change, Position, Size, predict, predict_changed};
use layout_diff_core::{InputFile, LoadOptions};

fn predicted_matches_built(variant: &str, changes: &[Change]) {
    let base_file = InputFile::open(std::path::Path::new(&testdata("whatif/base.elf"))).unwrap();
    let base = load(&base_file);
    let built_file = InputFile::open(std::path::Path::new(&testdata(&format!(
        "whatif/{variant}.elf"
    ))))
    .unwrap();
    let built = load(&built_file);
    let p = predict(&base, changes, &[]).expect("prediction");
    assert_eq!(p.reproduced, p.objects, "the unchanged layout is the build");
    // What suggest predicts with: the same layout, without the reproduction counts.
    let vars = base.variables_of_symbols();
    let link = layout_diff_core::link::LinkMap::build_from(&base, &vars);
    let changed = predict_changed(&base, &link, &vars, changes).expect("prediction");
    assert_eq!((changed.objects, changed.reproduced), (0, 0));
    assert_eq!(places(&changed.image), places(&p.image), "{variant}");
    assert_eq!(changed.moved, p.moved, "{variant}");
    let (want, got) = (places(&built), places(&p.image));
    assert_eq!(
        got, want,
        "{variant}: every object where the real build put it"
    );
    // The variant really differs from base: the prediction is not the identity.
    assert_ne!(places(&base), want, "{variant} moved something");
}

#[test]
fn a_struct_grown_by_8_is_predicted_in_every_instance_and_embedder() {
    predicted_matches_built(
        "grow",
        &[Change::Resize {
            name: "rec".into(),
            size: Size::Grow(8),
        }],
    );
}

#[test]
fn a_struct_grown_past_its_pages_moves_the_output_sections_after_it() {
    // struct rec +800 B (big.elf). readelf -S / nm: .data grows 0x31c -> 0x12bc B, so
    // the per-CPU load image moves from __per_cpu_load 0xffffffff82a52000 to
    // ...53000 (ALIGN(4096) after _edata 0xffffffff82a522bc), and .bss, 4096-aligned
    // after that image (0x1f8 -> 0xb58 B), from 0xffffffff82a53000 to ...54000.
    let changes = [Change::Resize {
        name: "rec".into(),
        size: Size::Grow(800),
    }];
    predicted_matches_built("big", &changes);
    let base_file = InputFile::open(std::path::Path::new(&testdata("whatif/base.elf"))).unwrap();
    let base = load(&base_file);
    let p = predict(&base, &changes, &[]).unwrap();
    let moved: Vec<(&str, i64, i64)> = p
        .sections_moved
        .iter()
        .map(|m| (m.name.as_str(), m.shift, m.grew))
        .collect();
    assert_eq!(
        moved,
        vec![
            (".data", 0, 0x12bc - 0x31c),
            (".data..percpu", 0x1000, 0xb58 - 0x1f8),
            (".bss", 0x1000, 0xb10 - 0x1b0),
        ]
    );
    let section = |name: &str| {
        let s = p.image.sections.iter().find(|s| s.name == name).unwrap();
        (s.address, s.size)
    };
    assert_eq!(section(".bss"), (0xffffffff82a54000, 0xb10));
    assert_eq!(section(".data..percpu"), (0, 0xb58));
    let (code, out, _) = run(&[
        "whatif",
        &testdata("whatif/base.elf"),
        "--struct",
        "rec=+800",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains(
            "  output sections: .data grows 4000 B; .data..percpu grows 2400 B and moves +4096 B; \
             .bss grows 2400 B and moves +4096 B\n"
        ),
        "{out}"
    );
}

#[test]
fn a_member_inserted_after_another_is_predicted_in_the_struct_and_every_instance() {
    // insert.elf declares `unsigned int inserted;` after rec.addr. pahole -C rec
    // insert.elf: inserted 16 (4), XXX 4 bytes hole, misc 24, regs 32, cpu 104,
    // bank 108, kind 109; size 112 (was 104). nm: b_log 0x138 -> 0x150 B, c_one moves
    // 0xffffffff82a512a0 -> ...c0.
    let changes = [Change::MemberInsert {
        name: "rec".into(),
        member: "inserted".into(),
        size: 4,
        align: None,
        at: Position::After("addr".into()),
    }];
    predicted_matches_built("insert", &changes);
    let base_file = InputFile::open(std::path::Path::new(&testdata("whatif/base.elf"))).unwrap();
    let base = load(&base_file);
    let p = predict(&base, &changes, &[]).unwrap();
    let rec = p
        .image
        .structs
        .iter()
        .find(|s| s.name == "rec")
        .expect("struct rec");
    let offsets: Vec<(&str, u64, u64)> = rec
        .members
        .iter()
        .map(|m| (m.name.unwrap_or(""), m.offset, m.size))
        .collect();
    assert_eq!(
        offsets,
        vec![
            ("status", 0, 8),
            ("addr", 8, 8),
            ("inserted", 16, 4),
            ("misc", 24, 8),
            ("regs", 32, 72),
            ("cpu", 104, 4),
            ("bank", 108, 1),
            ("kind", 109, 1),
        ]
    );
    assert_eq!(rec.size, 112);
    let c_one = p.image.symbols.iter().find(|s| s.name == "c_one").unwrap();
    assert_eq!((c_one.address, c_one.size), (0xffffffff82a512c0, 0x80));
    // The same from the command line, at the offset misc had.
    let (code, out, err) = run(&[
        "whatif",
        &testdata("whatif/base.elf"),
        "--struct",
        "rec",
        "--insert",
        "inserted=4",
        "--at",
        "16",
        "--nm",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(
        out.contains("ffffffff82a512c0 0000000000000080 d c_one\n"),
        "{out}"
    );
}

#[test]
fn the_root_cause_of_an_embedder_is_the_struct_it_embeds() {
    // struct holder embeds struct rec by value: it grows by 8 only because rec does,
    // so c_one (a holder) is filed under rec, and holder is no root of its own.
    let (code, out, _) = run(&[
        "whatif",
        &testdata("whatif/base.elf"),
        "--struct",
        "rec=+8",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let roots: Vec<(&str, &str)> = v["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["root"]["kind"].as_str().unwrap(),
                c["root"]["name"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(roots, vec![("struct", "rec")]);
    let via: Vec<&str> = v["causes"][0]["via"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(via.contains(&"c_one"), "{via:?}");
    // The real build says the same.
    let (_, real, _) = run(&[&testdata("whatif/base.elf"), &testdata("whatif/grow.elf")]);
    assert!(!real.contains("struct holder +8 B"), "{real}");
}

#[test]
fn an_object_aligned_to_a_line_is_predicted_with_its_input_section() {
    predicted_matches_built(
        "align",
        &[Change::SymbolAlign {
            name: "root".into(),
            align: 64,
        }],
    );
}

#[test]
fn a_static_per_cpu_variable_made_aligned_moves_to_the_shared_aligned_region() {
    predicted_matches_built(
        "pcpu",
        &[
            Change::Resize {
                name: "rec".into(),
                size: Size::Grow(8),
            },
            Change::PercpuAligned {
                name: "seen".into(),
                declaration: true,
            },
        ],
    );
}

#[test]
fn whatif_prints_what_it_vouches_for_then_the_predicted_diff() {
    let (code, out, err) = run(&["whatif", &testdata("whatif/base.elf"), "--struct", "rec=+8"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let head: Vec<&str> = out.lines().take(6).collect();
    assert_eq!(
        head,
        [
            "Predicted, not built: struct rec +8 B",
            "  link model: 27 data objects and 4 functions; the build laid out again unchanged puts 27 and 4 of them back at their addresses",
            "  14 predicted to move or change size",
            // b_holder (struct holder, 120 B, aligned to 8: FACTS.md's pahole) at
            // 0x...0c0 in base.elf, 32-aligned.
            "  assumed: b_holder aligned to 32 (its type's 8, raised by GCC for an aggregate of 120 B)",
            // The other 7 of the 8 data objects grow.elf resizes (nm -S: b_log, b_spare,
            // c_aligned_holder, c_holder, c_one, inject, seen).
            "  assumed: 7 more objects at the alignments their types give",
            "  not predicted: functions keep their addresses: code size changes are not predicted (give the recompiled .o files with --objects)",
        ]
    );
    assert!(out.contains("(predicted: struct rec +8 B)"), "{out}");
    let (code, out, _) = run(&[
        "whatif",
        &testdata("whatif/base.elf"),
        "--struct",
        "rec=+8",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["prediction"]["objects"], 27);
    assert_eq!(v["prediction"]["moved"], 14);
    assert_eq!(v["prediction"]["changes"][0], "struct rec +8 B");
}

#[test]
fn whatif_nm_lists_the_predicted_objects_as_nm_does() {
    let (code, out, _) = run(&[
        "whatif",
        &testdata("whatif/base.elf"),
        "--symbol",
        "root",
        "--align",
        "64",
        "--nm",
    ]);
    assert_eq!(code, 0);
    // root at the next line start after a_counter (nm of align.elf: ffffffff82a51080).
    assert!(
        out.lines()
            .any(|l| l == "ffffffff82a51080 0000000000000038 d root"),
        "{out}"
    );
}

#[test]
fn bad_changes_exit_2_with_one_line() {
    let base = testdata("whatif/base.elf");
    let old_o = testdata("old.o");
    let cases: [(&[&str], String); 5] = [
        // A change given wrongly beside recompiled objects is not dropped.
        (
            &["--struct", "rec=12x", "--objects", old_o.as_str()],
            "layout-diff: --struct rec=12x: \"12x\": invalid digit found in string\n".into(),
        ),
        (
            &["--struct", "nosuch=+8"],
            format!("layout-diff: {base}: no struct or union named \"nosuch\" in the build\n"),
        ),
        (
            &["--align", "64"],
            "layout-diff: --align 64: give --struct or --symbol before it\n".into(),
        ),
        (
            &["--percpu-aligned", "root"],
            format!("layout-diff: {base}: --percpu-aligned root: not a per-CPU variable\n"),
        ),
        (
            &["--symbol", "nosuch", "--align", "64"],
            format!("layout-diff: {base}: no data object named \"nosuch\" in the build\n"),
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["whatif", base.as_str()];
        all.extend_from_slice(args);
        let (code, out, err) = run(&all);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (2, "", want.as_str()),
            "{args:?}"
        );
    }
}

/// msg_queue's measured-hot `tail` moved from line 0 (offset 56) to line 1 (72)
/// behind the new `extra[2]` (testdata/evidence/README.md): declaring `extra` last
/// puts `tail` back at 56 for no bytes; declaring `tail` after `name` does too;
/// aligning `tail` to a line gives it line 2 (offset 128) and 112 bytes more.
#[test]
fn suggest_reorders_the_members_that_pushed_a_hot_member() {
    let (code, out, _) = run(&[
        "suggest",
        &testdata("evidence/old.elf"),
        &testdata("evidence/new.elf"),
        "--hot",
        &testdata("evidence/perf-type.txt"),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let m = &v["members"][0];
    assert_eq!(
        (&m["struct"], &m["member"], &m["line_old"], &m["line_new"]),
        (
            &serde_json::json!("msg_queue"),
            &serde_json::json!("tail"),
            &serde_json::json!(0),
            &serde_json::json!(1)
        )
    );
    assert_eq!(m["pushed_by"], serde_json::json!(["extra"]));
    let fixes: Vec<(String, bool, u64, i64)> = m["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["change"].as_str().unwrap().to_string(),
                f["restores"].as_bool().unwrap(),
                f["line"].as_u64().unwrap(),
                f["instance_bytes"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fixes,
        vec![
            (
                "--struct msg_queue --member extra --after tail".into(),
                true,
                0,
                0
            ),
            (
                "--struct msg_queue --member tail --after name".into(),
                true,
                0,
                0
            ),
            (
                "--struct msg_queue --member tail --align 64".into(),
                false,
                2,
                112
            ),
        ]
    );
    assert_eq!(
        m["fixes"][0]["declaration"],
        "/* struct msg_queue: declare after tail */ long int extra[2];"
    );
    assert_eq!(
        m["rule"],
        "[struct.\"msg_queue\"]\ntogether = [[\"tail\", \"name\", \"head\"]]\nwhy = \"a hot member kept on the line it shared (layout-diff suggest)\"\n"
    );
    // mstat's two candidate fixes restore nothing: exit 1.
    assert_eq!(code, 1);
    // The predicted build of the first fix, laid out by whatif, has tail at 56 again.
    let (_, out, _) = run(&[
        "whatif",
        &testdata("evidence/new.elf"),
        "--struct",
        "msg_queue",
        "--member",
        "extra",
        "--after",
        "tail",
        "--format",
        "json",
    ]);
    let w: serde_json::Value = serde_json::from_str(&out).unwrap();
    let s = w["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "msg_queue")
        .expect("msg_queue changed");
    let tail = s["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "tail")
        .expect("tail moved");
    assert_eq!(
        (
            tail["offset"]["old"].as_u64(),
            tail["offset"]["new"].as_u64()
        ),
        (Some(72), Some(56))
    );
}

#[test]
fn suggest_aligns_what_clears_each_flag_and_says_what_it_costs() {
    let (code, out, _) = run(&[
        "suggest",
        &testdata("evidence/old.elf"),
        &testdata("evidence/new.elf"),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "every flagged object has a fix that restores it");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let items = v["suggestions"].as_array().expect("a list of suggestions");
    let first: Vec<(String, String, bool)> = items
        .iter()
        .map(|s| {
            (
                s["object"].as_str().unwrap().to_string(),
                s["fixes"][0]["change"].as_str().unwrap().to_string(),
                s["fixes"][0]["restores"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        first,
        [
            (
                "nr_threads".into(),
                "--symbol nr_threads --align 64".into(),
                true
            ),
            (
                "hot_stat".into(),
                "--symbol calc_load_tasks --align 64".into(),
                true
            ),
            // It lost __read_mostly: put back, it leaves jiffies_64's line for the
            // read-mostly data (predicted last of main.c's there, ffffffff82a00e84,
            // after rm_other at ...e80: OLD defines it first, but DWARF keeps no
            // definition order, so the model cannot).
            (
                "sysctl_rm_knob".into(),
                "--read-mostly sysctl_rm_knob".into(),
                true
            ),
        ]
    );
    // Aligning hot_stat itself changes nothing: it already starts its line.
    let hot = &items[1]["fixes"][1];
    assert_eq!(hot["change"], "--symbol hot_stat --align 64");
    assert_eq!(
        (hot["restores"].as_bool(), hot["shifted"].as_u64()),
        (Some(false), Some(0))
    );
}

/// A fuzzer's find (the snapshot target): a forged snapshot whose objects end at
/// 2^64, on which predicting a struct's growth added places unchecked (a panic with
/// overflow checks, as `cargo test` builds). Every predicted place saturates now. The
/// snapshot is forged here from `whatif/base.elf`: the last object of `.data`,
/// `c_ticks`, and `.data` itself made to end at 2^64 - 1, as the fuzzer's did; growing
/// `struct rec` (b_log's, before it in `.data`) pushes it past.
#[test]
fn a_forged_snapshot_is_predicted_without_overflow() {
    let elf = testdata("whatif/base.elf");
    let file = InputFile::open(std::path::Path::new(&elf)).unwrap();
    let mut image = file.load(&LoadOptions::default()).unwrap();
    let last = image
        .symbols
        .iter_mut()
        .filter(|s| s.kind == SymbolKind::Object && s.section == ".data")
        .max_by_key(|s| s.place)
        .expect("an object in .data");
    assert_eq!(last.name, "c_ticks");
    last.size = u64::MAX - last.address;
    for s in image.sections.iter_mut().filter(|s| s.name == ".data") {
        s.size = u64::MAX - s.address;
    }
    let path = std::env::temp_dir().join(format!("whatif-overflow-{}.snap", std::process::id()));
    layout_diff_core::snapshot::write(&image, &[], None, &path).unwrap();
    let forged = InputFile::open(&path).unwrap();
    let image = forged.load(&LoadOptions::default()).unwrap();
    std::fs::remove_file(&path).unwrap();
    // It reads back as forged: one object that ends at 2^64 - 1.
    assert_eq!(
        image
            .symbols
            .iter()
            .filter(|s| s.address.checked_add(s.size) == Some(u64::MAX))
            .count(),
        1
    );
    let p = predict(
        &image,
        &[Change::Resize {
            name: "rec".into(),
            size: Size::Grow(8),
        }],
        &[],
    )
    .expect("a prediction");
    assert_eq!(p.reproduced, p.objects);
}
