//! Every command's JSON on the fixtures holds no integer above 2^53: jq and JavaScript
//! read numbers as doubles and would round kernel addresses (docs/json.md: addresses are
//! hex strings).

mod common;

use common::{run, testdata};
use serde_json::Value;

const EXACT: u64 = 1 << 53;

/// Paths (`a.b[3].c`) of every integer above 2^53 in `v`.
fn big_numbers(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Number(n)
            if n.as_u64().is_some_and(|x| x > EXACT)
                || n.as_i64().is_some_and(|x| x < -(EXACT as i64)) =>
        {
            out.push(format!("{at} = {n}"));
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                big_numbers(x, &format!("{at}[{i}]"), out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                big_numbers(x, &format!("{at}.{k}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn no_command_writes_an_integer_above_2_pow_53() {
    let (old, new) = (testdata("old.elf"), testdata("new.elf"));
    let (base, patched) = (testdata("check/base.elf"), testdata("check/patched.elf"));
    let rules = |n: &str| testdata(&format!("check/rules/{n}.toml"));
    let (r_root, r_sep, r_percpu, r_fn, r_groups, r_mce) = (
        rules("root_user"),
        rules("separate"),
        rules("percpu"),
        rules("functions"),
        rules("groups"),
        rules("mce"),
    );
    let (ev_old, ev_new) = (testdata("evidence/old.elf"), testdata("evidence/new.elf"));
    let perf = testdata("evidence/perf-type.txt");
    let c2c = testdata("check/c2c.txt");
    let (sg_old, sg_new) = (testdata("suggest/old.elf"), testdata("suggest/new.elf"));
    let (sg_fn, sg_hot, sg_rules) = (
        testdata("suggest/hot-fn.txt"),
        testdata("suggest/hot.txt"),
        testdata("suggest/rules.toml"),
    );
    let (st_old, st_new, st_rules, st_hot) = (
        testdata("suggest/structs.elf"),
        testdata("suggest/structs-new.elf"),
        testdata("suggest/structs.toml"),
        testdata("suggest/hot-members.txt"),
    );
    let commands: Vec<Vec<&str>> = vec![
        vec!["show", &old],
        vec!["show", &old, "--struct", "*"],
        vec!["show", &old, "--symbol", "*"],
        vec!["show", &old, "--line", "ffffffff82a51240"],
        vec!["show", &old, "--percpu", "--line", "11c0"],
        vec!["show", &base, "--hot", &c2c],
        vec!["show", &ev_new, "--hot", &perf],
        vec![&old, &new],
        vec![&old, &new, "--all"],
        vec![&base, &patched, "--hot", &c2c],
        vec![&ev_old, &ev_new, "--hot", &perf],
        vec!["check", "--rules", &r_root, &base],
        vec!["check", "--rules", &r_sep, &base],
        vec!["check", "--rules", &r_percpu, &old],
        vec!["check", "--rules", &r_fn, &old],
        vec!["check", "--rules", &r_groups, &patched],
        vec!["check", "--rules", &r_mce, &old, &new],
        vec!["history", &old, &new, "--symbol", "root_user"],
        vec!["whatif", &old, "--symbol", "root_user", "--align", "64"],
        vec!["suggest", &ev_old, &ev_new, "--hot", &perf],
        vec!["suggest", &sg_old, &sg_new, "--hot", &sg_fn],
        vec!["suggest", &sg_new, "--rules", &sg_rules],
        vec!["suggest", &sg_new, "--hot", &sg_hot],
        vec!["suggest", &st_old, "--rules", &st_rules],
        vec!["suggest", &st_old, &st_new, "--hot", &st_hot],
    ];
    let mut checked = 0;
    for mut args in commands {
        args.extend(["--format", "json"]);
        let (code, out, err) = run(&args);
        assert!(code == 0 || code == 1, "{args:?}: exit {code}: {err}");
        let mut found = Vec::new();
        for doc in serde_json::Deserializer::from_str(&out).into_iter::<Value>() {
            let doc = doc.unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"));
            big_numbers(&doc, "", &mut found);
            checked += 1;
        }
        assert!(found.is_empty(), "{args:?}: {found:?}");
    }
    assert_eq!(checked, 25);
}
