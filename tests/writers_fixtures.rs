//! Lists of writers are ordered by evidence, frequent first (issue 49): a function on
//! the built-in known-hot list before those without evidence, then by name.
//! testdata/writers (FACTS.md, objdump): nr_forks is written by a_rare_reset (store,
//! writers.c:22), copy_process (add, :28; known hot: "copy_process") and zap_forks
//! (store, :39); struct fstats's forks through a pointer by the same three (:23, :29,
//! :40). By name alone, a_rare_reset came first.

mod common;

use common::{json, run, testdata};

fn writers_elf() -> String {
    testdata("writers/writers.elf")
}

#[test]
fn show_symbol_lists_the_known_hot_writer_first() {
    let (code, out, _) = run(&["show", &writers_elf(), "--symbol", "nr_forks"]);
    assert_eq!(code, 0);
    let list: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "  written by:")
        .take(5)
        .collect();
    assert_eq!(
        list,
        [
            "  written by:",
            "    copy_process  +0x0  read-modify-write  ./writers.c:28",
            "    a_rare_reset  +0x0  store  ./writers.c:22",
            "    zap_forks  +0x0  store  ./writers.c:39",
            "  read by: none in the code",
        ]
    );
    let (_, v) = json(&["show", &writers_elf(), "--symbol", "nr_forks"]);
    let names: Vec<&str> = v["symbols"][0]["accesses"]["writers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["function"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["copy_process", "a_rare_reset", "zap_forks"]);
}

#[test]
fn type_level_writers_list_the_known_hot_writer_first() {
    let (code, out, _) = run(&["show", &writers_elf(), "--struct", "fstats", "--access"]);
    assert_eq!(code, 0);
    let forks: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("  +0x0 forks"))
        .take(4)
        .collect();
    assert_eq!(
        forks,
        [
            "  +0x0 forks (8 B): 3 writers, 0 readers",
            "      w copy_process                   rmw    ./writers.c:29",
            "      w a_rare_reset                   write  ./writers.c:23",
            "      w zap_forks                      write  ./writers.c:40",
        ]
    );
}
