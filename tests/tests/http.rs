//! The `ochre` binary over Streamable HTTP: rmcp's HTTP client, `Host`/`Origin`
//! validation against DNS rebinding, the bearer token, `/health`.

use anyhow::Result;
use ochre_tests::*;
use serde_json::json;

const SECRET: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

fn initialize_body() -> serde_json::Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}
        }
    })
}

async fn post_mcp(port: u16, headers: &[(&str, &str)]) -> Result<reqwest::StatusCode> {
    let mut req = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(initialize_body().to_string());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    Ok(req.send().await?.status())
}

#[tokio::test]
async fn http_client_lists_and_calls_totp() -> Result<()> {
    let data = TempDir::new("http");
    let t = 2_000_000_000u64;
    let server = HttpServer::start(
        data.path(),
        &[],
        &[
            ("OCHRE_TOTP_EXAMPLE_ORG", SECRET),
            ("OCHRE_FIXED_CLOCK_MS", &(t * 1000).to_string()),
        ],
    )
    .await?;
    let client = server.client().await?;
    let names = tool_names(&client).await?;
    assert!(names.contains(&"oc_totp_generate".to_owned()), "{names:?}");
    let res = call(
        &client,
        "oc_totp_generate",
        json!({"domain": "example.org"}),
    )
    .await?;
    let out = res.structured_content.clone().expect("structured");
    assert_eq!(out["code"], reference_totp(SECRET, t, 6, 30));
    // RFC 6238's SHA-1 vector at t=2000000000 is 69279037; 6 digits keep the tail.
    assert_eq!(out["code"], "279037");
    let err = error_of(&call(&client, "oc_totp_generate", json!({"domain": 1})).await?);
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    client.cancel().await?;

    let health: serde_json::Value =
        reqwest::get(format!("http://127.0.0.1:{}/health", server.port))
            .await?
            .json()
            .await?;
    assert_eq!(health["status"], "ok");
    Ok(())
}

#[tokio::test]
async fn foreign_origin_and_host_are_refused() -> Result<()> {
    let data = TempDir::new("http-origin");
    let server = HttpServer::start(data.path(), &[], &[]).await?;
    let port = server.port;
    let own = format!("http://127.0.0.1:{port}");
    // Control: a loopback origin and no origin are served.
    assert!(post_mcp(port, &[("Origin", &own)]).await?.is_success());
    assert!(post_mcp(port, &[]).await?.is_success());
    // DNS rebinding: a page on evil.example talking to the local server.
    let status = post_mcp(port, &[("Origin", "http://evil.example")]).await?;
    assert_eq!(status, reqwest::StatusCode::FORBIDDEN, "foreign Origin");
    let status = post_mcp(port, &[("Host", "evil.example")]).await?;
    assert!(status.is_client_error(), "foreign Host got {status}");
    let status = post_mcp(port, &[("Host", &format!("evil.example:{port}"))]).await?;
    assert!(status.is_client_error(), "foreign Host:port got {status}");
    Ok(())
}

#[tokio::test]
async fn bearer_token_is_enforced() -> Result<()> {
    let data = TempDir::new("http-auth");
    let server = HttpServer::start(data.path(), &["--auth-token", "s3cret-token"], &[]).await?;
    let port = server.port;
    assert_eq!(
        post_mcp(port, &[]).await?,
        reqwest::StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        post_mcp(port, &[("Authorization", "Bearer wrong")]).await?,
        reqwest::StatusCode::UNAUTHORIZED
    );
    assert!(
        post_mcp(port, &[("Authorization", "Bearer s3cret-token")])
            .await?
            .is_success()
    );
    Ok(())
}

#[tokio::test]
async fn non_loopback_bind_requires_a_token() -> Result<()> {
    let data = TempDir::new("http-bind");
    let out = std::process::Command::new(ochre_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["--http", "0", "--http-host", "0.0.0.0"])
        .env_remove("OCHRE_AUTH_TOKEN")
        .output()?;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--auth-token"), "{stderr}");
    Ok(())
}
