//! The WebAssembly builds' reuse (`Reuse` in host/builtin/build_wasm.rs, the
//! build scripts' shared code): a kept build is restored only when every file
//! it was built from is the same, byte for byte, as in the checkout now.

// (Its `build_wasm` runs cargo: the build scripts test it on every build.)
#![allow(dead_code)]

include!("../../../host/builtin/build_wasm.rs");

use anyhow::Result;
use ochre_tests::TempDir;
use std::path::Path;

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::create_dir_all(path.parent().expect("a parent"))?;
    std::fs::write(path, text)?;
    Ok(())
}

/// A checkout holding one guest crate, and cargo's output for it as a build
/// leaves it (its `.wasm` and its `.d`, naming the sources it read).
fn checkout(ws: &Path, out: &Path, wasm: &str) -> Result<()> {
    write(&ws.join("Cargo.toml"), "[workspace]\nmembers = [\"guest\"]\n")?;
    write(&ws.join("Cargo.lock"), "version = 4\n")?;
    write(&ws.join("guest/Cargo.toml"), "[package]\nname = \"guest-one\"\n")?;
    write(&ws.join("guest/src/lib.rs"), "mod with_space;\n")?;
    write(&ws.join("guest/src/with space.rs"), "pub fn f() {}\n")?;
    write(&ws.join("wit/plugin.wit"), "package a:b;\n")?;
    write(&out.join("guest_one.wasm"), wasm)?;
    let d = |p: &str| ws.join(p).display().to_string().replace(' ', "\\ ");
    write(
        &out.join("guest_one.d"),
        &format!(
            "{}: {} {} {}\n",
            out.join("guest_one.wasm").display(),
            d("guest/src/lib.rs"),
            d("guest/src/with space.rs"),
            d("wit/plugin.wit")
        ),
    )?;
    Ok(())
}

#[test]
fn a_kept_wasm_build_is_restored_only_for_the_same_inputs() -> Result<()> {
    let dir = TempDir::new("wasm-reuse");
    let (ws, target) = (dir.path().join("checkout"), dir.path().join("target"));
    let out = target.join("wasm32-wasip2/wasm");
    checkout(&ws, &out, "built from the first sources")?;
    let reuse = Reuse::new(&target, &ws, &["guest-one"]).expect("reuse on");
    // Nothing kept yet.
    assert!(!reuse.restore(&out));
    reuse.store(&out);

    // The same inputs: the kept build's output comes back.
    std::fs::write(out.join("guest_one.wasm"), "something else")?;
    assert!(reuse.restore(&out));
    assert_eq!(
        std::fs::read_to_string(out.join("guest_one.wasm"))?,
        "built from the first sources"
    );

    // Any input changed (a source, one with a space in its name, the WIT, the
    // package's manifest, the lock file): no reuse, and no change to the output.
    for (file, text) in [
        ("guest/src/lib.rs", "mod with_space; // changed\n"),
        ("guest/src/with space.rs", "pub fn g() {}\n"),
        ("wit/plugin.wit", "package a:c;\n"),
        ("guest/Cargo.toml", "[package]\nname = \"guest-one\"\nversion = \"0.2.0\"\n"),
        ("Cargo.lock", "version = 4\n# another dependency\n"),
    ] {
        let path = ws.join(file);
        let before = std::fs::read_to_string(&path)?;
        std::fs::write(&path, text)?;
        std::fs::write(out.join("guest_one.wasm"), "a new build")?;
        assert!(!reuse.restore(&out), "restored after {file} changed");
        assert_eq!(std::fs::read_to_string(out.join("guest_one.wasm"))?, "a new build");
        std::fs::write(&path, before)?;
    }
    // Another set of crates, or another toolchain's settings: not this build.
    let other = Reuse::new(&target, &ws, &["guest-two"]).expect("reuse on");
    assert!(!other.restore(&out));

    // A second build (changed sources) is kept beside the first; each is
    // restored for its own sources; only the last four are kept.
    std::fs::write(ws.join("guest/src/lib.rs"), "mod with_space; // second\n")?;
    std::fs::write(out.join("guest_one.wasm"), "built from the second sources")?;
    reuse.store(&out);
    std::fs::write(ws.join("guest/src/lib.rs"), "mod with_space;\n")?;
    assert!(reuse.restore(&out));
    assert_eq!(
        std::fs::read_to_string(out.join("guest_one.wasm"))?,
        "built from the first sources"
    );
    for n in 3..=6 {
        std::fs::write(ws.join("guest/src/lib.rs"), format!("mod with_space; // {n}\n"))?;
        reuse.store(&out);
    }
    let kept = std::fs::read_dir(target.join("reuse/guest-one"))?.count();
    assert_eq!(kept, 4, "kept builds");
    // The first, least recently used, went.
    std::fs::write(ws.join("guest/src/lib.rs"), "mod with_space;\n")?;
    assert!(!reuse.restore(&out));

    // A build that read a file outside the checkout is not kept.
    let (ws2, target2) = (dir.path().join("checkout2"), dir.path().join("target2"));
    let out2 = target2.join("wasm32-wasip2/wasm");
    checkout(&ws2, &out2, "x")?;
    let d = std::fs::read_to_string(out2.join("guest_one.d"))?;
    std::fs::write(out2.join("guest_one.d"), d.trim_end().to_owned() + " /etc/hostname\n")?;
    let reuse2 = Reuse::new(&target2, &ws2, &["guest-one"]).expect("reuse on");
    reuse2.store(&out2);
    assert!(!reuse2.restore(&out2));
    assert!(
        !target2.join("reuse/guest-one").exists()
            || std::fs::read_dir(target2.join("reuse/guest-one"))?.count() == 0
    );
    Ok(())
}
