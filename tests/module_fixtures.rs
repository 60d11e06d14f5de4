//! Kernel modules as users have them: a relocatable object (testdata/old.o, built
//! from testdata/src/kernel.c with `.rela.debug_*` sections, see testdata/README.md)
//! is read with its debug relocations applied, and its placement is said to be per
//! section and relative; a compressed `.ko.xz` / `.ko.zst` is refused with one line.

mod common;

use common::{json, run, testdata};

#[test]
fn module_placement_is_per_section_and_relative() {
    let (code, out, err) = run(&["show", &testdata("old.o"), "--symbol", "root_user"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().nth(1),
        Some(format!("note: {}", layout_diff_core::show::REL_NOTE).as_str())
    );
    // readelf -s testdata/old.o: root_user is at .data+0x1a0, 136 bytes; its type comes
    // from .debug_info through .rela.debug_info (pahole -C user_struct: 136 bytes).
    assert!(
        out.contains("root_user (object, global, .data, struct user_struct, 136 bytes)"),
        "{out}"
    );
    assert!(out.contains(" address         00000000000001a0 "), "{out}");
    let (_, v) = json(&["show", &testdata("old.o"), "--symbol", "root_user"]);
    assert_eq!(v["note"], layout_diff_core::show::REL_NOTE);
}

#[test]
fn compressed_modules_are_refused_with_one_line() {
    let dir = std::env::temp_dir().join(format!("ld-ko-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    for (name, magic, says) in [
        (
            "ext4.ko.xz",
            &[0xfd, b'7', b'z', b'X', b'Z', 0][..],
            "xz-compressed (a distro's .ko.xz?); decompress it first: xz -dk FILE",
        ),
        (
            "ext4.ko.zst",
            &[0x28, 0xb5, 0x2f, 0xfd][..],
            "zstd-compressed (a distro's .ko.zst?); decompress it first: zstd -d FILE",
        ),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, [magic, &[0u8; 64][..]].concat()).expect("write");
        let path = p.to_str().unwrap_or_default();
        for args in [vec!["show", path], vec![path, path]] {
            let (code, _, err) = run(&args);
            assert_eq!(code, 2, "{args:?}");
            assert_eq!(err, format!("layout-diff: {path}: {says}\n"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
