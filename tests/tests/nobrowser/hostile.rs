//! Hostile plugins: an infinite loop, a memory bomb, a trap, and one asking for an
//! interface it was not granted. Each fails its call (or its load) with the right
//! structured error; the server keeps serving and the same plugin works again.

use std::time::{Duration, Instant};

use anyhow::Result;
use ochre_tests::*;
use serde_json::json;

const HOSTILE: &[&str] = &["hello", "hostile", "greedy"];

#[tokio::test]
async fn hostile_calls_fail_with_the_right_code_and_the_server_keeps_serving() -> Result<()> {
    let (data, _plugins, dir) = data_and_plugins("hostile", HOSTILE);
    let client = stdio_client(
        data.path(),
        &["--plugin-dir", &dir, "--plugin-timeout-ms", "1500", "--plugin-memory-mb", "32"],
        &[],
    )
    .await?;
    let names = tool_names(&client).await?;
    for t in ["spin_forever", "membomb_allocate", "trap_now", "hello_greet", "oc_totp_generate"] {
        assert!(names.contains(&t.to_owned()), "{t} missing from {names:?}");
    }
    assert!(!names.contains(&"greedy_steal".to_owned()), "greedy must be refused");

    let cases = [
        ("spin_forever", "PLUGIN_TIMEOUT"),
        ("membomb_allocate", "PLUGIN_OUT_OF_MEMORY"),
        ("trap_now", "PLUGIN_TRAPPED"),
    ];
    for (tool, code) in cases {
        let started = Instant::now();
        let res = client.tool(tool, json!({})).await?;
        let elapsed = started.elapsed();
        let err = error_of(&res);
        assert_eq!(err["code"], code, "{tool}: {err}");
        assert!(elapsed < Duration::from_secs(10), "{tool} took {elapsed:?}");
        // The same plugin works on the next call, and so does another one.
        let res = client.tool("hostile_check", json!({})).await?;
        assert_eq!(result_json(&res), json!("check ok 1048576"), "after {tool}");
        let res = client.tool("hello_greet", json!({"name": tool})).await?;
        assert_ne!(res.is_error, Some(true), "after {tool}: {res:?}");
    }
    // The deadline is the configured one, not something else.
    let started = Instant::now();
    let err = client.tool_error("spin_forever", json!({})).await?;
    assert!(started.elapsed() >= Duration::from_millis(1400), "{:?}", started.elapsed());
    assert_eq!(err["timeoutMs"], 1500);
    let err = client.tool_error("trap_now", json!({})).await?;
    assert!(
        err["stderr"].as_str().unwrap_or("").contains("traps on purpose"),
        "the guest's panic message is reported: {err}"
    );
    client.cancel().await?;

    // The failed calls were journaled as failures with their codes.
    let journal = read_jsonl_dir(&data.path().join("journal"));
    let codes: Vec<&str> = journal.iter().filter_map(|e| e["error"].as_str()).collect();
    for code in ["PLUGIN_TIMEOUT", "PLUGIN_OUT_OF_MEMORY", "PLUGIN_TRAPPED"] {
        assert!(codes.contains(&code), "{code} not journaled: {codes:?}");
    }
    Ok(())
}

#[tokio::test]
async fn an_ungranted_interface_is_refused_at_load_and_the_rest_loads() -> Result<()> {
    let (data, _plugins, dir) = data_and_plugins("greedy", HOSTILE);

    let list = plugins_list(data.path(), &["--plugin-dir", &dir], &[])?;
    let greedy = listed(&list, "greedy");
    assert_eq!(greedy["status"], "refused");
    let reason = greedy["reason"].as_str().expect("reason");
    assert!(
        reason.contains("\"secrets\"") && reason.contains("--grant greedy=secrets"),
        "{reason}"
    );
    assert_eq!(greedy["instantiations"], 0);
    for name in ["hello", "hostile", "totp"] {
        assert_eq!(listed(&list, name)["status"], "loaded", "{name}");
    }

    // The operator can deny an interface to everyone, built-ins included.
    let list =
        plugins_list(data.path(), &["--plugin-dir", &dir, "--deny-interface", "secrets"], &[])?;
    let totp = listed(&list, "totp");
    assert_eq!(totp["status"], "refused");
    assert!(totp["reason"].as_str().expect("reason").contains("denies"));
    assert_eq!(listed(&list, "hello")["status"], "loaded");

    // A grant lets it in, and it still sees only its own secrets namespace.
    let client = stdio_client(
        data.path(),
        &["--plugin-dir", &dir, "--grant", "greedy=secrets"],
        &[("OCHRE_GREEDY_MINE", "granted-value"), ("OCHRE_TOTP_EXAMPLE_COM", "JBSWY3DPEHPK3PXP")],
    )
    .await?;
    // It read its own (its answer masks it: a secret leaves a tool only as a
    // declared `secret_result`).
    let res = client.tool("greedy_steal", json!({"key": "mine"})).await?;
    assert_eq!(result_json(&res), json!("•••"));
    let res = client.tool("greedy_steal", json!({"key": "example.com"})).await?;
    assert_eq!(result_json(&res), json!(""), "another plugin's secret is out of reach");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_disabled_group_is_never_instantiated() -> Result<()> {
    let data = TempDir::new("disabled");
    let list = plugins_list(data.path(), &["--disable-tools", "totp"], &[])?;
    let totp = listed(&list, "totp");
    assert_eq!(totp["status"], "disabled");
    assert_eq!(totp["instantiations"], 0);
    assert_eq!(totp["tools"], json!(["oc_totp_generate"]));

    // Control: enabled, it is instantiated (once, for describe).
    let list = plugins_list(data.path(), &[], &[])?;
    let totp = listed(&list, "totp");
    assert_eq!(totp["status"], "loaded");
    assert_eq!(totp["instantiations"], 1);
    Ok(())
}

#[tokio::test]
async fn a_clashing_tool_name_is_refused_naming_both_plugins() -> Result<()> {
    let (data, _plugins, dir) = data_and_plugins("dupe", &["dupe", "hello"]);
    let list = plugins_list(data.path(), &["--plugin-dir", &dir], &[])?;
    let dupe = listed(&list, "dupe");
    assert_eq!(dupe["status"], "refused");
    let reason = dupe["reason"].as_str().expect("reason");
    assert!(
        reason.contains("oc_totp_generate")
            && reason.contains("\"totp\"")
            && reason.contains("\"dupe\""),
        "{reason}"
    );
    assert_eq!(listed(&list, "totp")["status"], "loaded");
    assert_eq!(listed(&list, "hello")["status"], "loaded");

    // The server starts and the name still belongs to the built-in plugin.
    let secret = "JBSWY3DPEHPK3PXP";
    let t = 1_234_567_890u64;
    let client = stdio_client(
        data.path(),
        &["--plugin-dir", &dir],
        &[("OCHRE_TOTP_EXAMPLE_COM", secret), ("OCHRE_FIXED_CLOCK_MS", &(t * 1000).to_string())],
    )
    .await?;
    let res = client.tool("oc_totp_generate", json!({"domain": "example.com"})).await?;
    let out = res.structured_content.clone().expect("structured");
    assert_eq!(out["code"], reference_totp(secret, t, 6, 30));
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn wasi_gives_a_plugin_no_files_env_or_network() -> Result<()> {
    let (data, _plugins, dir) = data_and_plugins("snoop", &["hostile"]);
    let marker = std::path::Path::new("/tmp/ochre-snoop");
    let _ = std::fs::remove_file(marker);
    let client =
        stdio_client(data.path(), &["--plugin-dir", &dir], &[("OCHRE_VISIBLE", "no")]).await?;
    let res = client.tool("snoop_try", json!({})).await?;
    let report = res.structured_content.clone().expect("structured");
    for key in ["readPasswd", "listRoot", "listCwd", "writeTmp", "connect"] {
        let v = report[key].as_str().unwrap_or("");
        assert!(v.starts_with("denied"), "{key}: {v}");
    }
    assert_eq!(report["envCount"], 0);
    assert!(!marker.exists(), "the plugin wrote a host file");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_plugin_of_an_unknown_wit_version_is_refused_and_0_1_loads_beside_0_2() -> Result<()> {
    let (data, _plugins, dir) = data_and_plugins("futurewit", &["futurewit", "hello", "cdpuser"]);
    let list = plugins_list(data.path(), &["--plugin-dir", &dir, "--grant", "cdpuser=cdp"], &[])?;
    let future = listed(&list, "futurewit");
    assert_eq!(future["status"], "refused");
    let reason = future["reason"].as_str().expect("reason");
    assert!(
        reason.contains("ochre:plugin@9.0.0")
            && reason.contains("ochre:plugin@0.2.0")
            && reason.contains("@0.1.0"),
        "{reason}"
    );
    assert_eq!(future["instantiations"], 0);
    // hello is built against 0.1.0 (the SDK's wit-v0-1 feature), cdpuser and the
    // built-in plugins against 0.2.0: all load side by side.
    let hello = listed(&list, "hello");
    assert_eq!((&hello["status"], &hello["wit"]), (&json!("loaded"), &json!("0.1.0")), "{hello}");
    let cdpuser = listed(&list, "cdpuser");
    assert_eq!(
        (&cdpuser["status"], &cdpuser["wit"]),
        (&json!("loaded"), &json!("0.2.0")),
        "{cdpuser}"
    );
    assert_eq!(listed(&list, "core")["wit"], "0.2.0");
    Ok(())
}

#[tokio::test]
async fn raw_cdp_needs_a_grant_and_stays_inside_its_declared_domains() -> Result<()> {
    let (data, _plugins, dir) = data_and_plugins("cdp", &["cdpuser"]);

    // Not granted: refused at load, never instantiated.
    let list = plugins_list(data.path(), &["--plugin-dir", &dir], &[])?;
    let p = listed(&list, "cdpuser");
    assert_eq!(p["status"], "refused", "{p}");
    assert!(p["reason"].as_str().expect("reason").contains("cdp"), "{p}");
    assert_eq!(p["instantiations"], 0);
    // Granted but denied by the operator for everyone: refused too.
    let list = plugins_list(
        data.path(),
        &["--plugin-dir", &dir, "--grant", "cdpuser=cdp", "--deny-interface", "cdp"],
        &[],
    )?;
    assert_eq!(listed(&list, "cdpuser")["status"], "refused");

    let client =
        stdio_client(data.path(), &["--plugin-dir", &dir, "--grant", "cdpuser=cdp"], &[]).await?;
    let res = client.tool("cdp_probe", json!({"method": "Runtime.evaluate", "params": {"expression": "6 * 7", "returnByValue": true}}))
    .await?;
    let out = res.structured_content.clone().expect("structured");
    assert_eq!(out["result"]["value"], 42, "{out}");
    // Outside its domains: refused before anything is sent.
    let err = client.tool_error("cdp_probe", json!({"method": "Network.getCookies"})).await?;
    assert_eq!(err["code"], "PERMISSION_DENIED", "{err}");
    assert_eq!(err["domain"], "Network");
    let err = client.tool_error("cdp_probe", json!({"method": "Runtime"})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    // A CDP error comes back structured, and the server keeps serving.
    let err = client.tool_error("cdp_probe", json!({"method": "Page.noSuchCommand"})).await?;
    assert_eq!(err["code"], "BROWSER_ERROR", "{err}");
    let res = client
        .tool("cdp_probe", json!({"method": "Runtime.evaluate", "params": {"expression": "1"}}))
        .await?;
    assert_ne!(res.is_error, Some(true));
    client.cancel().await?;
    Ok(())
}
