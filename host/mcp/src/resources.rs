//! What ochre stores, as MCP resources a client can list and read:
//!
//! - `ochre://output/oh_...` — an output handle's payload (until it expires);
//! - `ochre://recordings/rec-...` — a recording (`{meta, steps}` JSON), and
//!   `ochre://recordings/rec-.../recording.html` (`.json`) when exported;
//! - `ochre://evidence/ev-.../<file>` — an evidence bundle's files
//!   (`manifest.json`, `screenshot.png`, `dom.html`, `network.json`, `console.json`);
//! - `ochre://journal/YYYY-MM-DD` — a day of the journal (JSONL).
//!
//! Reading checks the same ids and lifetimes as the tools do: an expired handle
//! is an error, as in `oc_output_fetch`.

use std::path::{Path, PathBuf};

use ochre_host::Host;
use ochre_host::HostBrowser;
use ochre_host::error::{Code, ToolError};

/// The scheme of every resource.
pub const SCHEME: &str = "ochre://";

/// One resource in a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    /// `ochre://...`
    pub uri: String,
    /// A short name.
    pub name: String,
    /// What it holds.
    pub description: String,
    /// Its MIME type.
    pub mime_type: String,
    /// Its size in bytes, when known.
    pub size: Option<u64>,
}

/// A resource's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// UTF-8 text.
    Text(String),
    /// Bytes (sent base64-encoded).
    Blob(Vec<u8>),
}

/// A resource read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceContent {
    /// Its URI.
    pub uri: String,
    /// Its MIME type.
    pub mime_type: String,
    /// Its content.
    pub body: ResourceBody,
}

fn not_found(uri: &str, why: &str) -> ToolError {
    let uri: String = uri.chars().take(200).collect();
    ToolError::resource_not_found(format!(
        "no resource {uri:?}: {why}; resources/list shows what there is"
    ))
    .with("uri", uri)
}

/// The MIME type of an evidence or export file, by its name.
fn mime_of(name: &str) -> &'static str {
    ochre_protocol::mime::of(name).unwrap_or("application/octet-stream")
}

fn body_of(mime: &str, bytes: Vec<u8>) -> ResourceBody {
    let texty = mime.starts_with("text/") || mime == "application/json" || mime.ends_with("jsonl");
    match texty {
        true => match String::from_utf8(bytes) {
            Ok(s) => ResourceBody::Text(s),
            Err(e) => ResourceBody::Blob(e.into_bytes()),
        },
        false => ResourceBody::Blob(bytes),
    }
}

/// A plain name: `[A-Za-z0-9._-]`, no leading dot, at most 100 bytes.
fn plain(name: &str) -> bool {
    ochre_host::stores::is_plain_name(name, 100)
}

fn files_of(dir: &Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_str()?.to_owned();
                    let meta = e.metadata().ok()?;
                    (meta.is_file() && plain(&name)).then_some((name, meta.len()))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The subdirs of `dir` (newest name last), as names.
fn dirs_of(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .filter(|n| plain(n))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn evidence_root(host: &Host) -> Option<PathBuf> {
    host.browser().evidence_dir()
}

/// Every resource: output handles, recordings, evidence bundles, journal
/// days (newest first within each kind).
pub fn list(host: &Host) -> Vec<ResourceEntry> {
    let mut out = Vec::new();
    for m in host.outputs().live() {
        out.push(ResourceEntry {
            uri: format!("{SCHEME}output/{}", m.output_handle),
            name: m.output_handle.clone(),
            description: format!("output of {} (expires {})", m.source_tool, m.expires_at),
            mime_type: m.mime_type.clone(),
            size: Some(m.size_bytes),
        });
    }
    for r in host.recorder().list(1000) {
        let dir = host.data_dir().join("recordings").join(&r.id);
        out.push(ResourceEntry {
            uri: format!("{SCHEME}recordings/{}", r.id),
            name: r.id.clone(),
            description: format!("recording {:?}: its steps", r.label),
            mime_type: "application/json".into(),
            size: None,
        });
        for (file, size) in files_of(&dir) {
            if file == "recording.html" || file == "recording.json" {
                out.push(ResourceEntry {
                    uri: format!("{SCHEME}recordings/{}/{file}", r.id),
                    name: format!("{}/{file}", r.id),
                    description: format!("recording {:?}: its export", r.label),
                    mime_type: mime_of(&file).into(),
                    size: Some(size),
                });
            }
        }
    }
    if let Some(root) = evidence_root(host) {
        for id in dirs_of(&root).into_iter().rev() {
            let dir = root.join(&id);
            // A bundle is whole once its manifest is written (last).
            if !dir.join("manifest.json").is_file() {
                continue;
            }
            for (file, size) in files_of(&dir) {
                out.push(ResourceEntry {
                    uri: format!("{SCHEME}evidence/{id}/{file}"),
                    name: format!("{id}/{file}"),
                    description: format!("evidence bundle {id}"),
                    mime_type: mime_of(&file).into(),
                    size: Some(size),
                });
            }
        }
    }
    let journal = host.data_dir().join("journal");
    let mut days: Vec<(String, u64)> = files_of(&journal)
        .into_iter()
        .filter_map(|(f, size)| {
            let day = f.strip_prefix("journal-")?.strip_suffix(".jsonl")?;
            Some((day.to_owned(), size))
        })
        .collect();
    days.reverse();
    for (day, size) in days {
        out.push(ResourceEntry {
            uri: format!("{SCHEME}journal/{day}"),
            name: format!("journal {day}"),
            description: format!("the calls of {day}, one JSON line each"),
            mime_type: "application/jsonl".into(),
            size: Some(size),
        });
    }
    out
}

/// Read one resource (see [`list`]).
pub fn read(host: &Host, uri: &str) -> Result<ResourceContent, ToolError> {
    let Some(path) = uri.strip_prefix(SCHEME) else {
        return Err(not_found(uri, "ochre's resources start with ochre://"));
    };
    let parts: Vec<&str> = path.split('/').collect();
    let content = |mime: &str, bytes: Vec<u8>| ResourceContent {
        uri: uri.to_owned(),
        mime_type: mime.to_owned(),
        body: body_of(mime, bytes),
    };
    match parts.as_slice() {
        ["output", handle] => {
            let (meta, bytes) = host.outputs().payload(handle).map_err(|e| {
                if e.code == Code::OutputHandleNotFound { not_found(uri, &e.message) } else { e }
            })?;
            Ok(content(&meta.mime_type, bytes))
        }
        ["recordings", id] => {
            let v = host.recorder().load(id).map_err(|e| not_found(uri, &e.message))?;
            let bytes = serde_json::to_vec(&v).map_err(|e| ToolError::internal(e.to_string()))?;
            Ok(content("application/json", bytes))
        }
        ["recordings", id, file @ ("recording.html" | "recording.json")] => {
            host.recorder().load(id).map_err(|e| not_found(uri, &e.message))?;
            let path = host.data_dir().join("recordings").join(id).join(file);
            let bytes = std::fs::read(&path)
                .map_err(|_| not_found(uri, "the recording was not exported to that file"))?;
            Ok(content(mime_of(file), bytes))
        }
        ["evidence", id, file] if plain(id) && plain(file) => {
            let root = evidence_root(host).ok_or_else(|| not_found(uri, "no evidence dir"))?;
            let dir = root.join(id);
            if !dir.join("manifest.json").is_file() {
                return Err(not_found(uri, "no such evidence bundle"));
            }
            let bytes = std::fs::read(dir.join(file))
                .map_err(|_| not_found(uri, "the bundle has no such file"))?;
            Ok(content(mime_of(file), bytes))
        }
        ["journal", day]
            if day.len() == 10 && day.bytes().all(|b| b.is_ascii_digit() || b == b'-') =>
        {
            let path = host.data_dir().join("journal").join(format!("journal-{day}.jsonl"));
            let bytes = std::fs::read(&path)
                .map_err(|_| not_found(uri, "no journal for that day (7 days are kept)"))?;
            Ok(content("application/jsonl", bytes))
        }
        _ => Err(not_found(uri, "not an output handle, recording, evidence bundle or journal day")),
    }
}
