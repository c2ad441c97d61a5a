//! The embedding examples of `ochre-host` (`host/core/examples/`) run as a user
//! would run them, and do what they say: a native tool and a plugin from memory
//! called through the pipeline; a page driven from Rust, its form's submission
//! checked where it arrived (the example's own server).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Result, ensure};
use ochre_tests::{chromium_bin, fixture_wasm};

/// An example built by this `cargo test --workspace` (target/<profile>/examples).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let bin = dir.join("examples").join(name);
    assert!(
        bin.exists(),
        "{} not found: run the tests with `cargo test --workspace` (which builds the examples)",
        bin.display()
    );
    bin
}

fn run(cmd: &mut Command) -> Result<String> {
    let out = cmd.env_remove("RUST_LOG").output()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    ensure!(
        out.status.success(),
        "{:?} failed: {stdout}\n{}",
        cmd.get_program(),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(stdout)
}

/// Run `native_and_plugin` with fixture `plugin`; each of `lines` is in its output.
fn native_and_plugin(plugin: &str, lines: &[&str]) -> Result<()> {
    let out = run(Command::new(example("native_and_plugin")).arg(fixture_wasm(plugin)))?;
    for line in lines {
        ensure!(out.contains(line), "{line:?} missing from:\n{out}");
    }
    Ok(())
}

#[test]
fn a_native_tool_and_a_plugin_from_memory_run_through_the_pipeline() -> Result<()> {
    native_and_plugin(
        "hello",
        &[
            "plugin hello from example plugin (from memory): Loaded",
            "sum: {\"sum\":6.5}",
            "\"code\":\"INVALID_ARGUMENT\"",
            "hello_greet: Hello, embedder! (greeting #1)",
            "\"hello_greet\":{\"calls\":1,\"failed\":0},\"sum\":{\"calls\":1,\"failed\":0}",
        ],
    )
}

#[test]
fn a_plugin_without_a_browser_interface_runs_beside_a_native_tool() -> Result<()> {
    native_and_plugin(
        "scoped",
        &[
            "plugin scoped from example plugin (from memory): Loaded",
            "scoped_note: noted from an embedder (#1)",
            "\"scoped_note\":{\"calls\":1,\"failed\":0},\"sum\":{\"calls\":1,\"failed\":0}",
        ],
    )
}

#[test]
fn a_page_is_driven_from_rust() -> Result<()> {
    let out = run(Command::new(example("drive_page")).env("OCHRE_CHROME", chromium_bin()?))?;
    ensure!(out.contains("the server received: email=ada%40example.com"), "{out}");
    Ok(())
}
