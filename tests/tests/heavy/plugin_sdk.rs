//! The plugin author's path, as the README gives it: package the SDK as a crate,
//! `ochre plugin new`, the project's own tests, `ochre plugin build`, `ochre plugins
//! list`, and a call of the new tool over MCP on a real page.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};
use ochre_tests::*;
use serde_json::json;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf()
}

fn cargo() -> Command {
    authors_env(Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())))
}

/// `cmd` without this build's compiler wrapper (CI compiles the workspace with
/// clippy as its compiler): a plugin author's builds have their own settings.
fn authors_env(mut cmd: Command) -> Command {
    cmd.env_remove("RUSTC_WORKSPACE_WRAPPER").env_remove("CLIPPY_ARGS");
    cmd
}

/// Run `cmd`; its stdout, or an error with its stderr.
fn run(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().with_context(|| format!("cannot run {cmd:?}"))?;
    ensure!(out.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `cargo package` of the SDK, its macro crate and the protocol crate, unpacked
/// into `into`: the
/// crates an author would get from a registry. Returns the SDK's directory.
fn packaged_sdk(into: &Path) -> Result<PathBuf> {
    let target = workspace().join("target/sdk-package");
    run(cargo()
        .current_dir(workspace())
        .args(["package", "-p", "ochre-protocol", "-p", "ochre-sdk-macros", "-p", "ochre-sdk"])
        .arg("--no-verify")
        .args(["--allow-dirty", "--quiet", "--target-dir"])
        .arg(&target))?;
    for krate in ["ochre-protocol", "ochre-sdk-macros", "ochre-sdk"] {
        let file = target.join(format!("package/{krate}-{}.crate", env!("CARGO_PKG_VERSION")));
        run(Command::new("tar").arg("xzf").arg(&file).arg("-C").arg(into))?;
    }
    Ok(into.join(format!("ochre-sdk-{}", env!("CARGO_PKG_VERSION"))))
}

/// `ochre ARGS` in `dir`, with the scaffold's builds sharing one target dir
/// (and the workspace's lock file, so no dependency resolves anew).
fn ochre_in(dir: &Path, args: &[&str]) -> Result<String> {
    run(authors_env(Command::new(ochre_bin()))
        .current_dir(dir)
        .args(args)
        .env("CARGO_TARGET_DIR", scaffold_target()?))
}

/// The target dir of the scaffold's builds: beside this test build's (so that
/// a target dir kept between runs, as CI's is, keeps the scaffold's
/// dependencies built too).
fn scaffold_target() -> Result<PathBuf> {
    Ok(target_dir()?.join("plugin-scaffold"))
}

#[tokio::test]
async fn a_new_plugin_built_against_the_packaged_sdk_loads_and_answers() -> Result<()> {
    let work = TempDir::new("scaffold");
    let sdk = packaged_sdk(work.path())?;
    let sdk = sdk.to_str().expect("utf8");

    // Refused before anything is written: a bad name, a project dir in use.
    let bad = Command::new(ochre_bin())
        .current_dir(work.path())
        .args(["plugin", "new", "Bad Name"])
        .output()?;
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("[a-z0-9_-]"));
    assert!(!work.path().join("Bad Name").exists());

    let said = ochre_in(work.path(), &["plugin", "new", "demo", "--sdk", sdk])?;
    assert!(said.contains("ochre plugin build"), "{said}");
    let project = work.path().join("demo");
    let manifest = std::fs::read_to_string(project.join("Cargo.toml"))?;
    assert!(manifest.contains("ochre-sdk-macros-"), "the macro crate is patched in:\n{manifest}");
    let again = Command::new(ochre_bin())
        .current_dir(work.path())
        .args(["plugin", "new", "demo"])
        .output()?;
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));
    std::fs::copy(workspace().join("Cargo.lock"), project.join("Cargo.lock"))?;

    // The project's own tests pass natively.
    let tested = run(cargo()
        .current_dir(&project)
        .args(["test", "--quiet"])
        .env("CARGO_TARGET_DIR", scaffold_target()?))?;
    assert!(tested.contains("2 passed"), "{tested}");

    // Built and checked, then listed as loaded.
    let plugins = work.path().join("plugins");
    let built = ochre_in(&project, &["plugin", "build", "--out", plugins.to_str().expect("utf8")])?;
    assert!(built.contains("tools: demo_headings"), "{built}");
    assert!(built.contains("interfaces: browser, logging"), "{built}");
    assert!(plugins.join("demo.wasm").is_file());
    let data = TempDir::new("scaffold-data");
    let plugin_dir = plugins.to_str().expect("utf8");
    let list = plugins_list(data.path(), &["--plugin-dir", plugin_dir], &[])?;
    let demo = listed(&list, "demo");
    assert_eq!(demo["status"], "loaded", "{demo}");

    // Called over MCP on a page: the headings down to the level asked for.
    let client = stdio_client(data.path(), &["--plugin-dir", plugin_dir], &[]).await?;
    let page = "data:text/html,<title>Outline</title><h1>Top</h1><p>x</p><h2>Part</h2><h3>Deep</h3><h4>Deeper</h4>";
    navigate(&client, page).await?;
    let all = client.tool_text("demo_headings", json!({})).await?;
    assert_eq!(all, "h1 Top\n  h2 Part\n    h3 Deep");
    let top = client.tool_text("demo_headings", json!({"max_level": 1})).await?;
    assert_eq!(top, "h1 Top");
    let err = client.tool_error("demo_headings", json!({"max_level": 9})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    client.cancel().await?;
    Ok(())
}

/// The same path in Python: `ochre plugin new --lang python`, the project's own
/// tests (natively), `ochre plugin build` (componentize-py from PyPI), then calls
/// over MCP; the sandbox's deadline and memory cap hold for the Python runtime too.
#[tokio::test]
async fn a_new_python_plugin_builds_loads_and_answers_within_the_sandbox() -> Result<()> {
    let bin = componentize_py_bin()?;
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let work = TempDir::new("scaffold-py");
    let said = ochre_in(work.path(), &["plugin", "new", "pydemo", "--lang", "python"])?;
    assert!(said.contains("created plugin pydemo"), "{said}");
    let project = work.path().join("pydemo");
    let tested = Command::new("python3").current_dir(&project).args(["-m", "unittest"]).output()?;
    let report = String::from_utf8_lossy(&tested.stderr);
    assert!(tested.status.success() && report.contains("Ran 3 tests"), "{report}");

    // Two tools more, to try the sandbox: an endless loop and a memory bomb.
    let mut app = std::fs::read_to_string(project.join("app.py"))?;
    app.push_str(
        "\n\n@ochre_sdk.tool(\"pydemo_spin\")\ndef spin(args):\n    \"\"\"Loop for ever.\"\"\"\n    while True:\n        pass\n\
         \n\n@ochre_sdk.tool(\"pydemo_hog\")\ndef hog(args):\n    \"\"\"Take 200 MiB.\"\"\"\n    return str(len(bytearray(200 * 1024 * 1024)))\n",
    );
    std::fs::write(project.join("app.py"), app)?;

    let plugins = work.path().join("plugins");
    let built = run(authors_env(Command::new(ochre_bin()))
        .current_dir(&project)
        .args(["plugin", "build", "--out", plugins.to_str().expect("utf8")])
        .env("PATH", &path))?;
    assert!(built.contains("tools: pydemo_headings, pydemo_spin, pydemo_hog"), "{built}");
    assert!(built.contains("interfaces: browser, logging"), "{built}");
    let data = TempDir::new("scaffold-py-data");
    let plugin_dir = plugins.to_str().expect("utf8");
    let list = plugins_list(data.path(), &["--plugin-dir", plugin_dir], &[])?;
    let demo = listed(&list, "pydemo");
    assert_eq!((&demo["status"], &demo["wit"]), (&json!("loaded"), &json!("0.2.0")), "{demo}");

    let args =
        ["--plugin-dir", plugin_dir, "--plugin-timeout-ms", "3000", "--plugin-memory-mb", "64"];
    let client = stdio_client(data.path(), &args, &[]).await?;
    let page = "data:text/html,<title>Outline</title><h1>Top</h1><p>x</p><h2>Part</h2><h3>Deep</h3><h4>Deeper</h4>";
    navigate(&client, page).await?;
    assert_eq!(
        client.tool_text("pydemo_headings", json!({})).await?,
        "h1 Top\n  h2 Part\n    h3 Deep"
    );
    assert_eq!(client.tool_text("pydemo_headings", json!({"max_level": 1})).await?, "h1 Top");
    let err = client.tool_error("pydemo_headings", json!({"max_level": 9})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    let started = std::time::Instant::now();
    let err = client.tool_error("pydemo_spin", json!({})).await?;
    assert_eq!(err["code"], "PLUGIN_TIMEOUT", "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "{:?}", started.elapsed());
    // Growing past the cap traps the instance, as for a Rust plugin.
    let err = client.tool_error("pydemo_hog", json!({})).await?;
    assert_eq!(err["code"], "PLUGIN_OUT_OF_MEMORY", "{err}");
    // The server and the plugin go on serving.
    assert_eq!(client.tool_text("pydemo_headings", json!({"max_level": 1})).await?, "h1 Top");
    client.cancel().await?;
    Ok(())
}
