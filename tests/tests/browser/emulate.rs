//! `emulate` over MCP (HTTP, two sessions at once) against real Chromium: each
//! emulated value read back by the page, and the headers checked where they
//! arrive (the site server); a session's emulation reaches every tab of that
//! session, the first document of a new tab included, and no other session's.

use anyhow::Result;
use ochre_tests::*;
use serde_json::{Value, json};

/// What the page reads of everything `emulate` sets.
const READ: &str = r#"(async () => {
  const where = await new Promise(ok => navigator.geolocation.getCurrentPosition(
    p => ok([p.coords.latitude, p.coords.longitude]), e => ok('denied: ' + e.message), {timeout: 3000}));
  return {
    language: navigator.language,
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    dark: matchMedia('(prefers-color-scheme: dark)').matches,
    reduce: matchMedia('(prefers-reduced-motion: reduce)').matches,
    ratio: devicePixelRatio,
    width: screen.width, // a phone's screen (its layout viewport is 980 wide)
    viewport: innerWidth,
    viewportHeight: innerHeight,
    touch: navigator.maxTouchPoints,
    ua: navigator.userAgent,
    where,
  };
})()"#;

async fn read(client: &Client, tab: Option<&str>) -> Result<Value> {
    let mut args = json!({"code": READ});
    if let Some(t) = tab {
        args["tabId"] = json!(t);
    }
    Ok(client.tool_json("javascript_tool", args).await?["value"].clone())
}

/// The headers the site saw for `/headers?tag=<tag>`.
async fn headers(site: &SiteServer, tag: &str) -> Result<String> {
    site.expect_recorded(&format!("headers tag={tag} ")).await
}

#[tokio::test]
async fn emulation_reaches_every_tab_of_its_session_and_no_other() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("emulate");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let (a, b) = (server.client().await?, server.client().await?);
    navigate(&a, &site.url("index.html")).await?;
    navigate(&b, &site.url("index.html")).await?;
    let own = read(&b, None).await?;
    assert_ne!(own["language"], "de-DE", "{own}");

    // Refused whole, before anything changes: a time zone Chromium does not
    // know, beside a locale that alone would be taken.
    let bad = json!({"scope": "session", "locale": "de-DE", "timezone": "Mars/Olympus_Mons"});
    let err = a.tool_error("emulate", bad).await?;
    assert_eq!(
        (err["code"].as_str(), err["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("timezone")),
        "{err}"
    );
    assert_eq!(
        read(&a, None).await?["language"],
        own["language"],
        "a refused call changed the locale"
    );
    let err = a.tool_error("emulate", json!({"device": "nokia-3310"})).await?;
    assert!(err["message"].as_str().is_some_and(|m| m.contains("pixel-8")), "{err}");
    let err = a.tool_error("emulate", json!({})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");

    // Session A: a phone in Tokyo that speaks German and likes it dark.
    let set = json!({
        "scope": "session", "device": "pixel-8", "locale": "de-DE", "timezone": "Asia/Tokyo",
        "colorScheme": "dark", "reducedMotion": "reduce",
        "latitude": 35.6812, "longitude": 139.7671,
    });
    let r = a.tool_json("emulate", set).await?;
    assert_eq!(r["scope"], "session", "{r}");
    assert_eq!(r["emulating"]["device"], "pixel-8", "{r}");
    let check = |v: &Value, what: &str| {
        assert_eq!(v["language"], "de-DE", "{what}: {v}");
        assert_eq!(v["timezone"], "Asia/Tokyo", "{what}: {v}");
        assert_eq!(
            (v["dark"].as_bool(), v["reduce"].as_bool()),
            (Some(true), Some(true)),
            "{what}: {v}"
        );
        assert_eq!(v["ratio"].as_f64(), Some(2.625), "{what}: {v}");
        assert_eq!(v["width"], 412, "{what}: {v}");
        assert!(v["touch"].as_u64().is_some_and(|t| t > 1), "{what}: {v}");
        assert!(v["ua"].as_str().is_some_and(|u| u.contains("Android")), "{what}: {v}");
        assert_eq!(v["where"], json!([35.6812, 139.7671]), "{what}: {v}");
    };
    check(&read(&a, None).await?, "the open tab");
    // What the server saw: the language and user agent of the emulation.
    navigate(&a, &site.url("headers?tag=a1")).await?;
    let seen = headers(&site, "a1").await?;
    assert!(seen.contains("lang=de-DE") && seen.contains("Android"), "{seen}");

    // A tab the session opens later, from its first request on.
    let t = a.tool_json("tabs_create", json!({"url": site.url("headers?tag=a2")})).await?;
    let tab = t["tabId"].as_str().or(t["id"].as_str()).expect("the new tab's id").to_owned();
    let seen = headers(&site, "a2").await?;
    assert!(
        seen.contains("lang=de-DE") && seen.contains("Android"),
        "first request of a new tab: {seen}"
    );
    check(&read(&a, Some(&tab)).await?, "a new tab");

    // Session B is not emulated, and its tab scope stays on its tab.
    let other = read(&b, None).await?;
    assert_eq!((&other["language"], &other["dark"]), (&own["language"], &own["dark"]), "{other}");
    assert!(other["ua"].as_str().is_some_and(|u| !u.contains("Android")), "{other}");
    navigate(&b, &site.url("headers?tag=b1")).await?;
    assert!(!headers(&site, "b1").await?.contains("lang=de-DE"));
    let r = b.tool_json("emulate", json!({"timezone": "America/Lima", "width": 500})).await?;
    assert_eq!(
        (r["scope"].as_str(), r["tabs"].as_array().map(Vec::len)),
        (Some("tab"), Some(1)),
        "{r}"
    );
    let v = read(&b, None).await?;
    let seen = (v["timezone"].as_str(), v["viewport"].as_u64());
    assert_eq!(seen, (Some("America/Lima"), Some(500)), "{v}");
    let t = b.tool_json("tabs_create", json!({"url": site.url("index.html")})).await?;
    let tab_b = t["tabId"].as_str().or(t["id"].as_str()).expect("the new tab's id").to_owned();
    let v = read(&b, Some(&tab_b)).await?;
    assert_eq!(v["timezone"], own["timezone"], "tab scope reached another tab: {v}");

    // Reset: A's tabs are the browser's own again.
    let r = a.tool_json("emulate", json!({"scope": "session", "reset": true})).await?;
    assert_eq!(r["emulating"], json!({}), "{r}");
    let v = read(&a, Some(&tab)).await?;
    assert_eq!(
        (&v["language"], &v["timezone"], &v["dark"]),
        (&own["language"], &own["timezone"], &own["dark"]),
        "{v}"
    );
    assert_eq!(v["ua"], own["ua"], "{v}");
    // The screen the agent's coordinates were taken on comes back: the
    // viewport and scale each tab had before its first emulation (the opened
    // tab took the session's emulation from its start).
    for (who, v) in [("the first tab", read(&a, None).await?), ("the opened tab", v)] {
        assert_eq!(
            (&v["viewport"], &v["viewportHeight"], &v["ratio"]),
            (&own["viewport"], &own["viewportHeight"], &own["ratio"]),
            "{who} after reset: {v} (before: {own})"
        );
    }
    // A tab's own reset too.
    b.tool_json("emulate", json!({"reset": true})).await?;
    let v = read(&b, None).await?;
    assert_eq!(
        (&v["viewport"], &v["viewportHeight"], &v["timezone"]),
        (&own["viewport"], &own["viewportHeight"], &own["timezone"]),
        "B's tab after reset: {v}"
    );
    Ok(())
}
