//! Named logins over MCP (HTTP, sessions apart) against the admin app: one
//! session signs in and saves its login; new sessions signed in with it reach
//! the app signed in without a login request reaching it (the app's own log
//! of login requests says so), each in a browser context of its own: one
//! signing out signs out no other. No value of the login is in any file of
//! the data dir; without the key it does not open.

use anyhow::Result;
use ochre_host::stores::logins::{LoginKey, LoginStore};
use ochre_tests::*;
use serde_json::json;

/// How many login requests reached the app.
fn login_requests(app: &AdminApp) -> Result<usize> {
    Ok(app.rows("select count(*) from login_log")?[0][0].as_u64().unwrap_or(0) as usize)
}

/// Whether `client` is signed in: the books list, not the sign-in form.
async fn signed_in<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    app: &AdminApp,
) -> Result<bool> {
    let r = client.tool("navigate", json!({"url": format!("{}/admin/book/", app.base)})).await?;
    let out = structured(&r);
    let snap = snapshot(client).await?;
    Ok(out["wall"].is_null() && snap.contains("Dune"))
}

#[tokio::test]
async fn a_saved_login_signs_new_sessions_in_apart_without_a_login_request() -> Result<()> {
    const SESSIONS: usize = 8;
    let dir = TempDir::new("logins-app");
    let app = AdminApp::start(dir.path()).await?;
    let data = TempDir::new("logins");
    let key = LoginKey::generate().map_err(anyhow::Error::msg)?;
    let encoded = key.encoded();
    let server = HttpServer::start(data.path(), &[], &[("OCHRE_LOGIN_KEY", &encoded)]).await?;

    // One session signs in, with a password, once, and saves its login.
    let first = server.client().await?;
    assert!(!signed_in(&first, &app).await?, "signed in before signing in");
    let fields = json!({"Username": "admin", "Password": "correct horse battery staple"});
    first.tool("fill_form", json!({"fields": fields, "submit": true})).await?;
    assert!(signed_in(&first, &app).await?, "the sign-in did not take");
    assert_eq!(login_requests(&app)?, 1);
    let saved = first.tool_json("oc_login_save", json!({"name": "admin"})).await?;
    let cookies = saved["cookies"].as_array().expect("cookie names");
    assert!(cookies.iter().any(|c| c.as_str().is_some_and(|c| c.ends_with(" session"))), "{saved}");
    let err = first.tool_error("oc_login_save", json!({"name": "../admin"})).await?;
    assert_eq!(err["code"], "INVALID_ARGUMENT", "{err}");
    let err = first.tool_error("oc_login_load", json!({"name": "nobody"})).await?;
    assert_eq!(err["code"], "LOGIN_NOT_FOUND", "{err}");

    // New sessions, each signed in with it at once: no login request.
    let clients = futures::future::try_join_all((0..SESSIONS).map(|_| server.client())).await?;
    let loaded = futures::future::try_join_all(
        clients.iter().map(|c| c.tool_json("oc_login_load", json!({"name": "admin"}))),
    )
    .await?;
    assert!(loaded.iter().all(|l| l["name"] == "admin"), "{loaded:?}");
    let signed = futures::future::try_join_all(clients.iter().map(|c| signed_in(c, &app))).await?;
    assert_eq!(signed, vec![true; SESSIONS], "not every seeded session is signed in");
    assert_eq!(login_requests(&app)?, 1, "a seeded session sent a login request");

    // A session that names the login in its handshake (`_meta`, or the
    // header) starts signed in; one naming a login that is not there is
    // refused at `initialize`, saying why.
    let by_meta = server.client_with(Some(json!({"ochre/login": "admin"})), &[]).await?;
    let by_header = server.client_with(None, &[("Ochre-Login", "admin")]).await?;
    assert!(signed_in(&by_meta, &app).await?, "_meta's login did not sign the session in");
    assert!(signed_in(&by_header, &app).await?, "the header's login did not sign the session in");
    let refused = server.client_with(Some(json!({"ochre/login": "nobody"})), &[]).await;
    let Err(refused) = refused else { panic!("a missing login was taken at initialize") };
    let why = format!("{refused:#}");
    assert!(why.contains("no login named \"nobody\""), "{why}");
    assert_eq!(login_requests(&app)?, 1, "a session named in its handshake sent a login request");
    drop((by_meta, by_header));

    // Workflow workers, each in a context of its own: the one that names the
    // login starts signed in, the other (of a session with no login) does not;
    // a login that is not there is refused before any tab opens.
    let fresh = server.client().await?;
    let books = format!("{}/admin/book/", app.base);
    let workers = json!([
        {"name": "signed", "url": books, "task": "read the books", "login": "admin"},
        {"name": "plain", "url": books, "task": "read the books"},
    ]);
    let wf = fresh.tool_json("workflow_init", json!({"name": "books", "workers": workers})).await?;
    let tab = |i: usize| wf["workers"][i]["tabId"].as_str().unwrap_or_default().to_owned();
    let page = |t: String| fresh.tool_text("read_page", json!({"tabId": t}));
    assert!(page(tab(0)).await?.contains("Dune"), "the worker with the login is not signed in");
    assert!(!page(tab(1)).await?.contains("Dune"), "the worker without a login is signed in");
    let bad = json!([{"name": "x", "url": books, "task": "t", "login": "nobody"}]);
    let err = fresh.tool_error("workflow_init", json!({"name": "bad", "workers": bad})).await?;
    assert_eq!(err["code"], "LOGIN_NOT_FOUND", "{err}");
    assert_eq!(login_requests(&app)?, 1, "a worker sent a login request");
    drop(fresh);

    // One signs out: it alone.
    clients[0].tool("navigate", json!({"url": format!("{}/logout", app.base)})).await?;
    assert!(!signed_in(&clients[0], &app).await?, "signing out did not take");
    let still =
        futures::future::try_join_all(clients[1..].iter().map(|c| signed_in(c, &app))).await?;
    assert_eq!(still, vec![true; SESSIONS - 1], "one session's sign-out signed others out");
    assert!(signed_in(&first, &app).await?);

    // No value of the login in any file of the data dir.
    let state =
        LoginStore::new(data.path(), Some(key)).load("admin").map_err(anyhow::Error::msg)?;
    let files = read_all_text(data.path());
    for c in &state.cookies {
        let value = c["value"].as_str().unwrap_or_default();
        assert!(value.len() >= 8, "a short cookie value: {c}");
        assert!(!files.contains(value), "cookie {} in clear in the data dir", c["name"]);
    }
    drop(clients);
    drop(first);
    drop(server);

    // Without the key, the login does not open.
    let keyless = HttpServer::start(data.path(), &[], &[]).await?;
    let client = keyless.client().await?;
    let err = client.tool_error("oc_login_load", json!({"name": "admin"})).await?;
    assert_eq!(err["code"], "LOGIN_LOCKED", "{err}");
    let list = client.tool_json("oc_login_list", json!({})).await?;
    assert_eq!(list["logins"][0]["name"], "admin", "{list}");
    drop(client);
    drop(keyless);

    // `--login`: every session starts signed in, HTTP sessions apart and the
    // shared tabs over stdio alike; a login that does not open stops the start.
    let keyed = [("OCHRE_LOGIN_KEY", encoded.as_str())];
    let server = HttpServer::start(data.path(), &["--login", "admin"], &keyed).await?;
    let clients = futures::future::try_join_all((0..3).map(|_| server.client())).await?;
    let signed = futures::future::try_join_all(clients.iter().map(|c| signed_in(c, &app))).await?;
    assert_eq!(signed, vec![true; 3], "--login did not sign every session in");
    clients[0].tool("navigate", json!({"url": format!("{}/logout", app.base)})).await?;
    assert!(!signed_in(&clients[0], &app).await? && signed_in(&clients[1], &app).await?);
    drop(clients);
    drop(server);
    let stdio = stdio_client(data.path(), &["--login", "admin"], &keyed).await?;
    assert!(signed_in(&stdio, &app).await?, "--login over stdio");
    drop(stdio);
    assert_eq!(login_requests(&app)?, 1, "a session sent a login request");
    let out = std::process::Command::new(ochre_bin())
        .args([
            "--data-dir",
            data.path().to_str().unwrap_or_default(),
            "--login",
            "nobody",
            "tools",
        ])
        .env("OCHRE_LOGIN_KEY", &encoded)
        .output()?;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("no login named \"nobody\""), "{said}");
    Ok(())
}

/// Writes an IndexedDB database `app` (version 3): a store of out-of-line
/// keys holding a date, bytes and a set; one of users with an
/// auto-incremented key path and a unique index; one record holding a Blob
/// (not saved, counted).
const IDB_WRITE: &str = r#"new Promise((ok, no) => {
  const open = indexedDB.open('app', 3);
  open.onupgradeneeded = () => {
    const db = open.result;
    db.createObjectStore('kv');
    const users = db.createObjectStore('users', { keyPath: 'id', autoIncrement: true });
    users.createIndex('by_email', 'email', { unique: true });
    db.createObjectStore('blobs');
  };
  open.onerror = () => no(open.error);
  open.onsuccess = () => {
    const db = open.result;
    const tx = db.transaction(['kv', 'users', 'blobs'], 'readwrite');
    tx.objectStore('kv').put({ when: new Date(1700000000000), bytes: new Uint8Array([1, 2, 255]), tags: new Set(['x', 'y']) }, ['session', 1]);
    tx.objectStore('kv').put('plain', 'k2');
    tx.objectStore('users').put({ name: 'Al', email: 'al@example.test' });
    tx.objectStore('users').put({ name: 'Bea', email: 'bea@example.test' });
    tx.objectStore('blobs').put(new Blob(['x']), 'b');
    tx.oncomplete = () => { db.close(); ok(1); };
    tx.onerror = () => no(tx.error);
  };
})"#;

/// Reads `app` back: what [`IDB_WRITE`] wrote, and the next key of `users`.
const IDB_READ: &str = r#"new Promise((ok, no) => {
  const open = indexedDB.open('app');
  open.onerror = () => no(open.error);
  open.onsuccess = () => {
    const db = open.result;
    const tx = db.transaction(['kv', 'users'], 'readwrite');
    const out = { version: db.version, stores: Array.from(db.objectStoreNames) };
    tx.objectStore('kv').get(['session', 1]).onsuccess = (e) => {
      const v = e.target.result;
      out.when = v.when instanceof Date ? v.when.getTime() : null;
      out.bytes = v.bytes instanceof Uint8Array ? Array.from(v.bytes) : null;
      out.tags = v.tags instanceof Set ? Array.from(v.tags) : null;
    };
    tx.objectStore('users').index('by_email').get('bea@example.test').onsuccess = (e) => { out.byEmail = e.target.result.name; };
    tx.objectStore('users').add({ name: 'Cy', email: 'cy@example.test' }).onsuccess = (e) => { out.nextId = e.target.result; };
    tx.oncomplete = () => { db.close(); ok(out); };
    tx.onerror = () => no(tx.error);
  };
})"#;

/// A login's `localStorage` and IndexedDB are written into a new session's
/// context without a request reaching its origin, and read back there by
/// the page.
#[tokio::test]
async fn a_logins_local_storage_reaches_a_new_session_without_a_request() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("logins-storage");
    let key = LoginKey::generate().map_err(anyhow::Error::msg)?.encoded();
    let server = HttpServer::start(data.path(), &[], &[("OCHRE_LOGIN_KEY", &key)]).await?;
    let a = server.client().await?;
    navigate(&a, &site.url("index.html")).await?;
    let set = "localStorage.setItem('token', 'tok-' + 'x'.repeat(20)); localStorage.setItem('theme', 'dark'); 2";
    a.tool_json("javascript_tool", json!({"code": set})).await?;
    a.tool_json("javascript_tool", json!({"code": IDB_WRITE})).await?;
    let saved = a.tool_json("oc_login_save", json!({"name": "site"})).await?;
    assert_eq!(saved["origins"], json!([site.url("").trim_end_matches('/')]), "{saved}");
    assert_eq!(saved["storage_entries"], 2, "{saved}");
    let origin = site.url("").trim_end_matches('/').to_owned();
    assert_eq!(saved["indexed_db"], json!([format!("{origin} app (4 records)")]), "{saved}");
    assert_eq!(saved["indexed_db_skipped"], 1, "{saved}");
    assert!(!read_all_text(data.path()).contains("tok-xxxx"), "a storage value in clear");

    let b = server.client().await?;
    let before = site.requests().len();
    b.tool_json("oc_login_load", json!({"name": "site"})).await?;
    let during = site.requests()[before..].to_vec();
    assert!(during.is_empty(), "writing the login's localStorage reached the site: {during:?}");
    navigate(&b, &site.url("index.html")).await?;
    let read = "[localStorage.getItem('token'), localStorage.getItem('theme')]";
    let got = b.tool_json("javascript_tool", json!({"code": read})).await?;
    assert_eq!(got["value"], json!([format!("tok-{}", "x".repeat(20)), "dark"]), "{got}");
    // IndexedDB too: its version, stores, indexes, keys and typed values.
    let got = b.tool_json("javascript_tool", json!({"code": IDB_READ})).await?;
    assert_eq!(
        got["value"],
        json!({"version": 3, "stores": ["blobs", "kv", "users"], "when": 1_700_000_000_000_u64,
               "bytes": [1, 2, 255], "tags": ["x", "y"], "byEmail": "Bea", "nextId": 3}),
        "{got}"
    );
    // A session signed in with nothing keeps its own storage.
    let c = server.client().await?;
    navigate(&c, &site.url("index.html")).await?;
    let got = c.tool_json("javascript_tool", json!({"code": read})).await?;
    assert_eq!(got["value"], json!([null, null]), "{got}");
    Ok(())
}

/// `ochre login save NAME --from -`: a storage-state file in Playwright's
/// shape (what `playwright codegen --save-storage` writes) becomes a sealed
/// login; a session signed in with it sends the cookie (the site's server
/// sees it) and its page reads the `localStorage`.
#[tokio::test]
async fn a_login_saved_from_a_storage_state_file_signs_a_session_in() -> Result<()> {
    use std::io::Write;
    let site = SiteServer::start().await?;
    let data = TempDir::new("logins-import");
    let key = LoginKey::generate().map_err(anyhow::Error::msg)?.encoded();
    let state = json!({
        "cookies": [{"name": "sid", "value": "imported-cookie-value", "domain": "127.0.0.1",
                     "path": "/", "expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"}],
        "origins": [{"origin": site.base, "localStorage": [{"name": "token", "value": "imported-token"}]}],
    });
    let save = |input: String, key: &str| -> Result<std::process::Output> {
        let mut child = std::process::Command::new(ochre_bin())
            .arg("--data-dir")
            .arg(data.path())
            .args(["login", "save", "imported", "--from", "-"])
            .env("OCHRE_LOGIN_KEY", key)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        child.stdin.take().expect("stdin").write_all(input.as_bytes())?;
        Ok(child.wait_with_output()?)
    };
    let out = save("{\"cookies\": \"secret-ish\"}".into(), &key)?;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("`cookies` is not a list"), "{said}");
    assert!(!said.contains("secret-ish"), "{said}");
    let out = save(state.to_string(), "")?;
    assert!(!out.status.success(), "saved without a key");
    let out = save(state.to_string(), &key)?;
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && shown.contains("127.0.0.1 sid"), "{shown}");
    let files = read_all_text(data.path());
    assert!(!files.contains("imported-cookie-value") && !files.contains("imported-token"));

    let server = HttpServer::start(data.path(), &[], &[("OCHRE_LOGIN_KEY", &key)]).await?;
    let client = server.client().await?;
    client.tool_json("oc_login_load", json!({"name": "imported"})).await?;
    navigate(&client, &site.url("record?from=imported")).await?;
    let seen = site.expect_recorded("from=imported").await?;
    assert!(seen.contains("cookie=sid=imported-cookie-value"), "{seen}");
    navigate(&client, &site.url("index.html")).await?;
    let got = client
        .tool_json("javascript_tool", json!({"code": "localStorage.getItem('token')"}))
        .await?;
    assert_eq!(got["value"], "imported-token", "{got}");
    Ok(())
}
