//! Installed plugins: `ochre plugin keygen`, `sign` and `install` put a signed
//! component in the data dir, pinned in plugins.lock; the server loads it from
//! there after a restart, refuses it once its bytes change, and an unsigned or
//! untrusted plugin is refused with nothing written. Grants come from the config.

use std::path::Path;
use std::process::Command;

use anyhow::Result;
use ochre_tests::*;
use serde_json::json;

/// The public key `ochre plugin keygen --out FILE` printed.
fn keygen(data: &Path, file: &Path) -> Result<String> {
    let said = ok(ochre_cli(data, &["plugin", "keygen", "--out", file.to_str().expect("utf8")])?);
    let key = said.lines().find_map(|l| l.strip_prefix("public key: ")).expect("a public key");
    Ok(key.to_owned())
}

/// `ochre plugin sign WASM --key KEY`, which must succeed.
fn sign(data: &Path, wasm: &Path, key: &Path) -> Result<()> {
    let utf8 = |p: &Path| p.to_str().expect("utf8").to_owned();
    ok(ochre_cli(data, &["plugin", "sign", &utf8(wasm), "--key", &utf8(key)])?);
    Ok(())
}

fn sha256sum(file: &Path) -> Result<String> {
    let out = Command::new("sha256sum").arg(file).output()?;
    Ok(format!(
        "sha256:{}",
        String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap_or("")
    ))
}

#[tokio::test]
async fn a_signed_plugin_installs_loads_after_a_restart_and_is_refused_once_changed() -> Result<()>
{
    let work = TempDir::new("install");
    let w = |name: &str| work.path().join(name);
    let data = w("data");
    let alice = keygen(&data, &w("alice.key"))?;
    let mallory = keygen(&data, &w("mallory.key"))?;
    assert_ne!(alice, mallory);
    let key_mode = std::fs::metadata(w("alice.key"))?.permissions();
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&key_mode) & 0o777, 0o600);
    std::fs::write(w("ochre.toml"), format!("[trust.keys]\nalice = \"{alice}\"\n"))?;
    let config = w("ochre.toml");
    let config = config.to_str().expect("utf8");

    // Signed by alice: installed and pinned.
    std::fs::copy(fixture_wasm("hello"), w("hello.wasm"))?;
    sign(&data, &w("hello.wasm"), &w("alice.key"))?;
    let said = ok(ochre_cli(
        &data,
        &["--config", config, "plugin", "install", w("hello.wasm").to_str().expect("utf8")],
    )?);
    assert!(said.contains("installed plugin hello"), "{said}");
    let lock: toml::Table = toml::from_str(&std::fs::read_to_string(data.join("plugins.lock"))?)?;
    let entry = &lock["plugin"].as_array().expect("entries")[0];
    assert_eq!(entry["name"].as_str(), Some("hello"));
    assert_eq!(entry["signer"].as_str(), Some("alice"));
    assert_eq!(entry["digest"].as_str(), Some(sha256sum(&w("hello.wasm"))?.as_str()));
    assert!(entry["source"].as_str().unwrap_or("").ends_with("hello.wasm"));

    // A new server on that data dir loads it from the lock, without --plugin-dir.
    serves_installed_hello(&data, "signer alice").await?;

    // Changed on disk: refused, naming both digests; the lock is left as it was.
    let lock_before = std::fs::read(data.join("plugins.lock"))?;
    let installed = data.join("plugins/hello.wasm");
    let mut bytes = std::fs::read(&installed)?;
    bytes.extend_from_slice(b"\0\x04\x01xjunk");
    std::fs::write(&installed, &bytes)?;
    let list = plugins_list(&data, &[], &[])?;
    let hello = listed(&list, "hello");
    assert_eq!(hello["status"], "refused");
    assert!(hello["reason"].as_str().unwrap_or("").contains("changed since"), "{hello}");
    assert_eq!(std::fs::read(data.join("plugins.lock"))?, lock_before);
    let client = stdio_client(&data, &[], &[]).await?;
    assert!(!tool_names(&client).await?.contains(&"hello_greet".to_owned()));
    client.cancel().await?;

    // Refused, nothing written: an unknown signer, a signature of other bytes,
    // no signature at all.
    let fresh = w("fresh");
    std::fs::copy(fixture_wasm("hello"), w("m.wasm"))?;
    sign(&fresh, &w("m.wasm"), &w("mallory.key"))?;
    let e = refused(ochre_cli(
        &fresh,
        &["--config", config, "plugin", "install", w("m.wasm").to_str().expect("utf8")],
    )?);
    assert!(e.contains("not a trusted key"), "{e}");
    std::fs::copy(fixture_wasm("futurewit"), w("other.wasm"))?;
    std::fs::copy(w("hello.wasm.sig"), w("other.wasm.sig"))?;
    let e = refused(ochre_cli(
        &fresh,
        &["--config", config, "plugin", "install", w("other.wasm").to_str().expect("utf8")],
    )?);
    assert!(e.contains("changed after signing"), "{e}");
    std::fs::copy(fixture_wasm("hello"), w("u.wasm"))?;
    let e = refused(ochre_cli(
        &fresh,
        &["--config", config, "plugin", "install", w("u.wasm").to_str().expect("utf8")],
    )?);
    assert!(e.contains("not signed") && e.contains("--allow-unsigned"), "{e}");
    assert!(!fresh.join("plugins.lock").exists() && !fresh.join("plugins").exists());

    // The operator lets this one in unsigned (config), and grants come from the config too.
    std::fs::write(
        w("ochre.toml"),
        format!(
            "[trust.keys]\nalice = \"{alice}\"\n[plugins.hello]\nallow_unsigned = true\n[plugins.cdpuser]\ngrants = [\"cdp\"]\n"
        ),
    )?;
    let said = ok(ochre_cli(
        &fresh,
        &["--config", config, "plugin", "install", w("u.wasm").to_str().expect("utf8")],
    )?);
    assert!(said.contains("signer: unsigned"), "{said}");
    let plugins = plugin_dir_with(&["cdpuser"]);
    let dir = plugins.path().to_str().expect("utf8");
    let list = plugins_list(&fresh, &["--config", config, "--plugin-dir", dir], &[])?;
    assert_eq!(listed(&list, "hello")["status"], "loaded");
    let cdpuser = listed(&list, "cdpuser");
    assert_eq!(cdpuser["status"], "loaded", "granted cdp by the config: {cdpuser}");
    assert_eq!((&cdpuser["interfaces"], &cdpuser["granted"]), (&json!(["cdp"]), &json!(["cdp"])));
    let list = plugins_list(&fresh, &["--plugin-dir", dir], &[])?;
    assert_eq!(listed(&list, "cdpuser")["status"], "refused", "no grant without the config");
    Ok(())
}
