//! Drive a page from Rust through the host: the built-in `core` tools on the
//! managed headless Chromium (found on `PATH`, or `OCHRE_CHROME`), against a page
//! this example serves on 127.0.0.1. Every call passes the same pipeline as an
//! agent's over MCP; the form's submission is checked where it arrives.
//!
//! Run: `cargo run -p ochre-host --example drive_page`

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

use ochre_host::browser::BrowserOptions;
use ochre_host::{CallOptions, CapabilityFilter, Host};
use serde_json::{Value, json};

const PAGE: &str = r#"<!doctype html><title>Sign up</title>
<form method="post" action="/signup"><label>Email <input name="email"></label>
<button>Sign up</button></form>"#;

/// Serve the page; every POST body goes to `posted`.
fn serve(posted: mpsc::Sender<String>) -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let base = format!("http://{}", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let (mut first, mut length) = (String::new(), 0usize);
            if reader.read_line(&mut first).is_err() {
                continue;
            }
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let html = if first.starts_with("POST") {
                let _ = posted.send(String::from_utf8_lossy(&body).into_owned());
                "<!doctype html><title>Welcome</title><p>Thanks!"
            } else {
                PAGE
            };
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{html}",
                html.len()
            );
        }
    });
    Ok(base)
}

/// The ref of the first line of a snapshot naming `role` and `name`.
fn ref_of(snapshot: &str, role: &str, name: &str) -> Option<String> {
    let line = snapshot.lines().find(|l| l.contains(role) && l.contains(name))?;
    let at = line.find("ax_")?;
    Some(line[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (tx, posted) = mpsc::channel();
    let base = serve(tx)?;
    let data = std::env::temp_dir().join(format!("ochre-drive-{}", std::process::id()));
    let browser = BrowserOptions {
        chrome_path: std::env::var_os("OCHRE_CHROME").map(Into::into),
        ..Default::default()
    };
    let host = Host::builder()
        .data_dir(&data)
        .capabilities(CapabilityFilter::Only(["core".to_owned()].into()))
        .browser(browser)
        .build()
        .await?;
    let call =
        async |tool: &str, args: Value| host.call_tool(tool, args, CallOptions::default()).await;

    let nav = call("navigate", json!({"url": format!("{base}/")})).await?;
    println!("navigate: {}", nav.summary);
    let page = call("read_page", json!({})).await?;
    let snapshot = page.text();
    println!("{snapshot}");
    let email = ref_of(&snapshot, "textbox", "Email").ok_or("no Email field in the snapshot")?;
    let button = ref_of(&snapshot, "button", "Sign up").ok_or("no Sign up button")?;
    let typed = call("form_input", json!({"ref": email, "value": "ada@example.com"})).await?;
    println!("form_input: {}", typed.summary);
    let clicked = call("interact", json!({"ref": button, "action": "click"})).await?;
    println!("interact: {}", clicked.summary);

    // Checked where it arrived: the server got the value typed.
    let body = posted.recv_timeout(std::time::Duration::from_secs(10))?;
    println!("the server received: {body}");
    assert_eq!(body, "email=ada%40example.com");
    host.shutdown().await;
    let _ = std::fs::remove_dir_all(&data);
    Ok(())
}
