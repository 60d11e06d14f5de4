//! Inputs that cannot be mapped (a FIFO here; sysfs's `/sys/kernel/btf/vmlinux` on a
//! running kernel) are read into memory instead: the output is the one the same bytes
//! give as a regular file, and an empty stream is refused as an empty file is.

mod common;

use std::path::{Path, PathBuf};

use common::{run, run_timed, testdata};

/// A fresh directory for one test's FIFO (`tag` keeps tests apart).
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ld-unmappable-{tag}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Lets a writer still waiting to open `fifo` (the binary never opened it) go on: an
/// open for reading and writing pairs with it and does not itself wait (Linux).
fn release(fifo: &Path) {
    drop(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(fifo),
    );
}

/// Runs the binary with `at` (in `args`) a FIFO fed `bytes` by a thread, then with `at`
/// a regular file of the same bytes; returns both runs (exit code, stdout, stderr).
/// The same path both times, so even the header line must match.
fn as_fifo_then_file(at: &Path, bytes: &[u8], args: &[&str]) -> [(i32, String, String); 2] {
    let made = std::process::Command::new("mkfifo")
        .arg(at)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", at.display());
    let (fifo, data) = (at.to_path_buf(), bytes.to_vec());
    // Opening for writing waits for the binary to open the FIFO for reading.
    let writer = std::thread::spawn(move || std::fs::write(&fifo, &data));
    let from_fifo = run_timed(args, 120);
    release(at);
    assert_eq!(from_fifo.0, 0, "{args:?} on a FIFO: {}", from_fifo.2);
    writer
        .join()
        .expect("writer thread")
        .expect("all bytes written to the FIFO");
    std::fs::remove_file(at).expect("FIFO removed");
    std::fs::write(at, bytes).expect("regular copy");
    let from_file = run(args);
    [from_fifo, from_file]
}

#[test]
fn raw_btf_through_a_fifo_is_the_file_s_listing() {
    let dir = scratch("btf");
    let blob = dir.join("old.btf");
    let bytes = std::fs::read(testdata("btf/old.btf")).expect("fixture");
    let (at, map) = (blob.to_str().expect("utf-8 path"), testdata("btf/old.map"));
    for args in [
        ["show", at, "--symbols", &map, "--symbol", "injectm"].as_slice(),
        ["show", at, "--struct", "*"].as_slice(),
    ] {
        let [fifo, file] = as_fifo_then_file(&blob, &bytes, args);
        assert_eq!(file.0, 0, "{args:?}: {}", file.2);
        assert!(!file.1.is_empty(), "{args:?}");
        assert_eq!(fifo, file, "{args:?}");
        std::fs::remove_file(&blob).ok();
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// An ELF file read rather than mapped: `object` reads its headers in place, so the
/// bytes read must start as aligned as a map's.
#[test]
fn an_elf_file_through_a_fifo_is_the_file_s_listing() {
    let dir = scratch("elf");
    let elf = dir.join("old.elf");
    let bytes = std::fs::read(testdata("old.elf")).expect("fixture");
    let at = elf.to_str().expect("utf-8 path");
    let [fifo, file] = as_fifo_then_file(&elf, &bytes, &["show", at, "--struct", "mce"]);
    assert_eq!(file.0, 0, "{}", file.2);
    assert!(file.1.contains("struct mce {"), "{}", file.1);
    assert_eq!(fifo, file);
    std::fs::remove_dir_all(&dir).ok();
}

/// A FIFO whose writer closes at once holds no bytes: refused in one line, exit 2, as
/// an empty regular file is (testdata/bad/empty in show_fixtures.rs).
#[test]
fn an_empty_fifo_is_refused_as_an_empty_file() {
    let dir = scratch("empty");
    let fifo = dir.join("empty");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let path = fifo.to_str().expect("utf-8 path").to_string();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, b""))
    };
    let (code, out, err) = run_timed(&["show", &path, "--struct", "mce"], 120);
    release(&fifo);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(
        err,
        format!("layout-diff: {path}: empty file, not an ELF file\n")
    );
    writer.join().expect("writer thread").expect("FIFO opened");
    // And the regular empty file still says the same.
    let empty = testdata("bad/empty");
    let (code, _, err) = run(&["show", &empty, "--struct", "mce"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        format!("layout-diff: {empty}: empty file, not an ELF file\n")
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The running kernel's BTF, which sysfs will not let be mapped shared (EACCES), is
/// read; skipped where the kernel exposes none.
#[test]
fn the_running_kernel_s_btf_is_read() {
    let btf = "/sys/kernel/btf/vmlinux";
    if !Path::new(btf).exists() {
        eprintln!("skipped: {btf} is not there (kernel without CONFIG_DEBUG_INFO_BTF)");
        return;
    }
    let (code, out, err) = run(&["show", btf, "--struct", "user_struct"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("struct user_struct {"), "{out}");
}
