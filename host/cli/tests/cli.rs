//! The `ochre` command line: startup errors are clear and name the way out.

use std::process::Command;

fn ochre(data: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ochre"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("run ochre")
}

fn temp(label: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("ochre-cli-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    p
}

#[test]
fn unknown_groups_fail_startup_listing_the_valid_ones() {
    let data = temp("unknown");
    let out = ochre(&data, &["--tools-only", "totp,bogus", "plugins", "list"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bogus"), "{err}");
    for g in ["core", "crawl", "recording", "workflow", "storage", "profile", "totp"] {
        assert!(err.contains(g), "{g} missing in {err}");
    }
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn tools_only_and_disable_tools_are_exclusive() {
    let data = temp("exclusive");
    let out = ochre(&data, &["--tools-only", "totp", "--disable-tools", "core", "plugins", "list"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--tools-only") && err.contains("--disable-tools"), "{err}");
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn plugins_list_shows_the_builtin_totp_group() {
    let data = temp("list");
    let out = ochre(&data, &["plugins", "list"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("totp [totp] loaded (builtin)"), "{text}");
    assert!(text.contains("tools: oc_totp_generate"), "{text}");
    assert!(text.contains("interfaces: clock, secrets"), "{text}");
    assert!(text.contains("built against: ochre:plugin@0.2.0"), "{text}");
    let _ = std::fs::remove_dir_all(&data);
}

/// `ochre ARGS` with its stdout a pipe nobody reads (`ochre guide | head`
/// after head has gone): its exit status and stderr.
fn with_stdout_closed(data: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_ochre"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("RUST_LOG")
        .env("OCHRE_SESSION_DIR", data.join("run"))
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run ochre");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_closed_stdout_ends_a_command_quietly_with_141() {
    let data = temp("closed-stdout");
    std::fs::create_dir_all(data.join("run")).expect("run dir");
    // The guide, the tools and the plugins are the server's (the command
    // becomes ochre-server); the session list is the command line's own.
    for args in [&["guide"][..], &["session", "list"], &["tools"], &["plugins", "list"]] {
        let (code, err) = with_stdout_closed(&data, args);
        assert_eq!(code, Some(141), "ochre {args:?}: {err}");
        assert!(err.is_empty(), "ochre {args:?} printed on stderr: {err}");
    }
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn a_stdout_that_cannot_take_the_output_is_an_error_that_says_so() {
    let data = temp("full-stdout");
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let out = Command::new(env!("CARGO_BIN_EXE_ochre"))
        .arg("--data-dir")
        .arg(&data)
        .arg("guide")
        .env_remove("RUST_LOG")
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run ochre");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("writing the output") && err.contains("No space left"), "{err}");
    let _ = std::fs::remove_dir_all(&data);
}
