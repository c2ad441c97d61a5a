//! Output handles (seed 004): a large tool result is stored under
//! `<data-dir>/output/<YYYY-MM-DD>/<handle>.{json|md|bin}` (atomically, with a
//! `<handle>.meta.json` sidecar) and the agent gets a small descriptor instead;
//! `oc_output_fetch` reads it back page by page. Handles expire after a TTL: an
//! expired handle is refused at once, and a background sweep deletes its files.
//! Handles survive a restart until they expire.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Clock;
use crate::error::ToolError;
use crate::stores::journal::{day_of, iso_of};
use crate::stores::write_atomic;
use ochre_protocol::lock;

/// Default `output_inline_limit_bytes` for `auto`.
pub const DEFAULT_INLINE_LIMIT: u64 = 32_768;
/// Longest preview in a descriptor, in bytes.
pub const MAX_PREVIEW_BYTES: usize = 2048;
/// Longest preview once JSON-escaped, so the whole descriptor response stays
/// under 4096 bytes even with the descriptor in both text and structured content.
const MAX_ESCAPED_PREVIEW: usize = 1100;
/// Default page of `oc_output_fetch`: items and bytes.
pub const DEFAULT_ITEMS: u64 = 200;
/// Default page of bytes.
pub const DEFAULT_BYTES: u64 = 65_536;
/// Largest page of bytes.
pub const MAX_BYTES: u64 = 8 << 20;

/// How a tool's result is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// As the tool returned it (the default).
    Inline,
    /// Always stored; the response is the descriptor.
    Handle,
    /// Inline up to this many bytes, else a handle.
    Auto(u64),
}

/// A result to store.
#[derive(Debug, Clone)]
pub enum Payload {
    /// JSON (stored as `.json`).
    Json(Value),
    /// Text (stored as `.md`).
    Text(String),
    /// Bytes with their MIME type (stored as `.bin`).
    Binary(Vec<u8>, String),
}

impl Payload {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Self::Json(v) => serde_json::to_vec(v).unwrap_or_default(),
            Self::Text(t) => t.as_bytes().to_vec(),
            Self::Binary(b, _) => b.clone(),
        }
    }

    /// Serialized size in bytes.
    pub fn size(&self) -> usize {
        match self {
            Self::Text(t) => t.len(),
            Self::Binary(b, _) => b.len(),
            Self::Json(_) => self.bytes().len(),
        }
    }
}

/// A stored handle, as its sidecar holds it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HandleMeta {
    /// `oh_` + 12 base32 chars.
    pub output_handle: String,
    /// The tool that produced it.
    pub source_tool: String,
    /// `application/json`, `text/markdown`, or the binary's type.
    pub mime_type: String,
    /// `json`, `md` or `bin`.
    pub ext: String,
    /// Payload size.
    pub size_bytes: u64,
    /// Items when the payload is a JSON array, or an object with one main array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_count: Option<u64>,
    /// Where the items are: `""` (the root array) or a top-level field name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_path: Option<String>,
    /// Creation time (RFC 3339) and ms.
    pub created_at: String,
    /// Creation time, ms.
    pub created_ms: u64,
    /// Expiry (RFC 3339).
    pub expires_at: String,
    /// Expiry, ms.
    pub expires_ms: u64,
}

/// The handles under a data dir.
pub struct HandleStore {
    dir: PathBuf,
    clock: Clock,
    ttl_ms: u64,
    /// The parsed items of the last handle paged by items.
    items: Mutex<Option<(String, Arc<Vec<Value>>)>>,
    /// The handles this process's sweeps deleted, with when they expired (the
    /// newest [`SWEPT_KEPT`]): a late fetch of one is told it expired, not
    /// that it never was.
    swept: Mutex<std::collections::VecDeque<(String, String)>>,
}

/// How many swept handles [`HandleStore`] remembers.
const SWEPT_KEPT: usize = 4096;

impl std::fmt::Debug for HandleStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandleStore")
            .field("dir", &self.dir)
            .field("ttl_ms", &self.ttl_ms)
            .finish_non_exhaustive()
    }
}

fn not_found(handle: &str, why: &str) -> ToolError {
    ToolError::output_handle_not_found(format!(
        "output handle {handle:?} {why}; run the tool again (with output_mode) for a new one"
    ))
    .with("output_handle", handle)
}

/// Whether `h` is a well-formed handle id (so also a safe file name).
pub fn valid_handle(h: &str) -> bool {
    h.len() == 15
        && h.starts_with("oh_")
        && h[3..].bytes().all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
}

fn new_handle() -> std::io::Result<String> {
    let mut raw = [0u8; 8];
    getrandom::fill(&mut raw).map_err(|e| std::io::Error::other(e.to_string()))?;
    let enc = data_encoding::BASE32_NOPAD.encode(&raw);
    Ok(format!("oh_{}", &enc[..12]))
}

/// Top-level fields that hold a result's list of items, in order of preference.
pub const ITEM_FIELDS: &[&str] =
    &["items", "pages", "results", "data", "entries", "rows", "records", "matches"];

/// The list of a JSON payload: the root array, or the first of [`ITEM_FIELDS`]
/// that is an array. Other payloads page by bytes only.
fn item_path(v: &Value) -> Option<String> {
    match v {
        Value::Array(_) => Some(String::new()),
        Value::Object(m) => ITEM_FIELDS
            .iter()
            .find(|f| m.get(**f).is_some_and(Value::is_array))
            .map(|f| (*f).to_owned()),
        _ => None,
    }
}

fn items_at<'a>(v: &'a Value, path: &str) -> Option<&'a Vec<Value>> {
    if path.is_empty() { v.as_array() } else { v.get(path)?.as_array() }
}

/// Cut `s` to at most `max` bytes on a char boundary.
fn cut(s: &str, max: usize) -> &str {
    &s[..s.floor_char_boundary(max)]
}

/// The preview: the start of the payload as text, at most 2048 bytes and short
/// enough once escaped.
fn preview(bytes: &[u8], binary: bool) -> String {
    if binary {
        return String::new();
    }
    let head = &bytes[..bytes.len().min(MAX_PREVIEW_BYTES + 4)];
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    let mut p = cut(text, MAX_PREVIEW_BYTES);
    while p.len() > 16 && serde_json::to_string(p).map_or(0, |s| s.len()) > MAX_ESCAPED_PREVIEW {
        p = cut(p, p.len() * 3 / 4);
    }
    p.to_owned()
}

impl HandleStore {
    /// Handles under `data_dir` living `ttl_ms`.
    pub fn new(data_dir: &Path, clock: Clock, ttl_ms: u64) -> Self {
        Self {
            dir: data_dir.join("output"),
            clock,
            ttl_ms,
            items: Mutex::new(None),
            swept: Mutex::default(),
        }
    }

    /// Store `payload` from `tool`; its metadata and the descriptor to return.
    pub fn create(&self, tool: &str, payload: &Payload) -> std::io::Result<(HandleMeta, Value)> {
        let now = self.clock.now_ms();
        let day = self.dir.join(day_of(now));
        std::fs::create_dir_all(&day)?;
        let handle = loop {
            let h = new_handle()?;
            if !day.join(format!("{h}.meta.json")).exists() {
                break h;
            }
        };
        let bytes = payload.bytes();
        let (ext, mime, items) = match payload {
            Payload::Json(v) => {
                let path = item_path(v);
                let n = path.as_deref().and_then(|p| items_at(v, p)).map(|a| a.len() as u64);
                ("json", "application/json".to_owned(), path.zip(n))
            }
            Payload::Text(_) => ("md", "text/markdown".to_owned(), None),
            Payload::Binary(_, m) => ("bin", m.clone(), None),
        };
        let expires = now.saturating_add(self.ttl_ms);
        let meta = HandleMeta {
            output_handle: handle.clone(),
            source_tool: tool.to_owned(),
            mime_type: mime,
            ext: ext.to_owned(),
            size_bytes: bytes.len() as u64,
            item_count: items.as_ref().map(|(_, n)| *n),
            item_path: items.map(|(p, _)| p),
            created_at: iso_of(now),
            created_ms: now,
            expires_at: iso_of(expires),
            expires_ms: expires,
        };
        // Payload first, then the sidecar: a handle is visible only once whole.
        write_atomic(&day.join(format!("{handle}.{ext}")), &bytes)?;
        let side = serde_json::to_vec(&meta).map_err(std::io::Error::other)?;
        write_atomic(&day.join(format!("{handle}.meta.json")), &side)?;
        let descriptor = json!({
            "output_handle": handle,
            "mime_type": meta.mime_type,
            "size_bytes": meta.size_bytes,
            "item_count": meta.item_count,
            "preview": preview(&bytes, matches!(payload, Payload::Binary(..))),
            "expires_at": meta.expires_at,
            "fetch_with": "oc_output_fetch",
        });
        Ok((meta, descriptor))
    }

    fn find(&self, handle: &str) -> Result<(PathBuf, HandleMeta), ToolError> {
        if !valid_handle(handle) {
            return Err(not_found(handle, "is not a handle (oh_ + 12 base32 chars)"));
        }
        let mut days: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        days.sort();
        for day in days.iter().rev() {
            let side = day.join(format!("{handle}.meta.json"));
            let Ok(bytes) = std::fs::read(&side) else {
                continue;
            };
            let damaged = || {
                crate::stores::corrupt(&side, &format!("output handle {handle}"))
                    .with("output_handle", handle)
            };
            let meta: HandleMeta = serde_json::from_slice(&bytes).map_err(|_| damaged())?;
            if meta.expires_ms <= self.clock.now_ms() {
                return Err(not_found(handle, &format!("expired at {}", meta.expires_at)));
            }
            if !valid_ext(&meta.ext) {
                return Err(damaged());
            }
            let file = day.join(format!("{handle}.{}", meta.ext));
            return Ok((file, meta));
        }
        if let Some((_, at)) = lock(&self.swept).iter().find(|(h, _)| h == handle) {
            return Err(not_found(handle, &format!("expired at {at}")));
        }
        Err(not_found(handle, "does not exist"))
    }

    fn items(&self, handle: &str, file: &Path, path: &str) -> Result<Arc<Vec<Value>>, ToolError> {
        let mut cache = lock(&self.items);
        if let Some((h, items)) = cache.as_ref()
            && h == handle
        {
            return Ok(items.clone());
        }
        let bytes = std::fs::read(file).map_err(|_| not_found(handle, "has lost its payload"))?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|_| {
            crate::stores::corrupt(file, &format!("output handle {handle}"))
                .with("output_handle", handle)
        })?;
        let items = Arc::new(items_at(&v, path).cloned().unwrap_or_default());
        *cache = Some((handle.to_owned(), items.clone()));
        Ok(items)
    }

    /// One page of a handle (`oc_output_fetch`).
    pub fn fetch(
        &self,
        handle: &str,
        offset: u64,
        limit: Option<u64>,
        format: &str,
    ) -> Result<Value, ToolError> {
        let (file, meta) = self.find(handle)?;
        let by_items = match format {
            "items" => {
                if meta.item_count.is_none() {
                    return Err(ToolError::invalid_argument(
                        "format",
                        format!(
                            "{handle} holds {} with no item list; use format bytes",
                            meta.mime_type
                        ),
                    ));
                }
                true
            }
            "bytes" => false,
            _ => meta.item_count.is_some(),
        };
        if by_items {
            let items = self.items(handle, &file, meta.item_path.as_deref().unwrap_or(""))?;
            let total = items.len() as u64;
            let limit = limit.unwrap_or(DEFAULT_ITEMS).max(1);
            let start = offset.min(total) as usize;
            let end = offset.saturating_add(limit).min(total) as usize;
            let page: Vec<Value> = items[start..end].to_vec();
            let returned = page.len() as u64;
            return Ok(page_json(handle, "items", offset, limit, returned, total, json!(page)));
        }
        let total = meta.size_bytes;
        let limit = limit.unwrap_or(DEFAULT_BYTES).clamp(1, MAX_BYTES);
        let want = limit.min(total.saturating_sub(offset)) as usize;
        let mut buf = vec![0u8; want];
        if want > 0 {
            let mut f = std::fs::File::open(&file)
                .map_err(|_| not_found(handle, "has lost its payload"))?;
            f.seek(SeekFrom::Start(offset))
                .and_then(|_| f.read_exact(&mut buf))
                .map_err(|_| not_found(handle, "has a truncated payload"))?;
        }
        let binary = meta.ext == "bin";
        let content = if binary {
            data_encoding::BASE64.encode(&buf)
        } else {
            // Text pages end on a character boundary (so `returned` may be a few
            // bytes short of `limit`); an offset inside a character is refused.
            if buf.first().is_some_and(|b| (0x80..0xC0).contains(b)) {
                return Err(ToolError::invalid_argument(
                    "offset",
                    format!(
                        "offset {offset} is inside a UTF-8 character; use the previous next_offset"
                    ),
                ));
            }
            let valid = match std::str::from_utf8(&buf) {
                Ok(_) => buf.len(),
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => {
                    return Err(not_found(handle, "holds text that is not UTF-8"));
                }
            };
            buf.truncate(valid);
            String::from_utf8(buf.clone()).unwrap_or_default()
        };
        let returned = if binary { want as u64 } else { content.len() as u64 };
        let mut out = page_json(handle, "bytes", offset, limit, returned, total, json!(content));
        if binary {
            out["encoding"] = json!("base64");
            out["mime_type"] = json!(meta.mime_type);
        }
        Ok(out)
    }

    /// The handles that have not expired (newest first), for `resources/list`.
    pub fn live(&self) -> Vec<HandleMeta> {
        let now = self.clock.now_ms();
        let mut out: Vec<HandleMeta> = std::fs::read_dir(&self.dir)
            .map(|days| {
                days.flatten()
                    .filter_map(|d| std::fs::read_dir(d.path()).ok())
                    .flat_map(|files| files.flatten())
                    .filter(|f| f.file_name().to_string_lossy().ends_with(".meta.json"))
                    .filter_map(|f| {
                        serde_json::from_slice::<HandleMeta>(&std::fs::read(f.path()).ok()?).ok()
                    })
                    .filter(|m| m.expires_ms > now && valid_handle(&m.output_handle))
                    .collect()
            })
            .unwrap_or_default();
        out.sort_by_key(|m| std::cmp::Reverse(m.created_ms));
        out
    }

    /// A handle's whole payload (checked as `oc_output_fetch` checks it).
    pub fn payload(&self, handle: &str) -> Result<(HandleMeta, Vec<u8>), ToolError> {
        let (file, meta) = self.find(handle)?;
        let bytes = std::fs::read(&file).map_err(|_| not_found(handle, "has lost its payload"))?;
        Ok((meta, bytes))
    }

    /// Delete expired handles (payload and sidecar) and empty day dirs; how many.
    pub fn sweep(&self) -> usize {
        let now = self.clock.now_ms();
        let mut removed = 0;
        let Ok(days) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        for day in days.filter_map(|e| e.ok().map(|e| e.path())) {
            let Ok(files) = std::fs::read_dir(&day) else {
                continue;
            };
            for side in files.filter_map(|e| e.ok().map(|e| e.path())) {
                let Some(name) = side.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                let Some(handle) = name.strip_suffix(".meta.json") else {
                    continue;
                };
                let Ok(bytes) = std::fs::read(&side) else {
                    continue;
                };
                // Damaged metadata is kept (its calls answer STATE_CORRUPT), never
                // taken for an expired handle.
                let Ok(meta) = serde_json::from_slice::<HandleMeta>(&bytes) else {
                    continue;
                };
                if meta.expires_ms <= now && valid_handle(handle) {
                    for ext in ["json", "md", "bin"] {
                        let _ = std::fs::remove_file(day.join(format!("{handle}.{ext}")));
                    }
                    let _ = std::fs::remove_file(&side);
                    removed += 1;
                    let mut swept = lock(&self.swept);
                    if swept.len() >= SWEPT_KEPT {
                        swept.pop_front();
                    }
                    swept.push_back((handle.to_owned(), meta.expires_at.clone()));
                }
            }
            // Only succeeds when empty.
            let _ = std::fs::remove_dir(&day);
        }
        if removed > 0 {
            let mut cache = lock(&self.items);
            *cache = None;
        }
        removed
    }
}

/// One page of `oc_output_fetch`: `next_offset` is null exactly at the end.
fn page_json(
    handle: &str,
    format: &str,
    offset: u64,
    limit: u64,
    returned: u64,
    total: u64,
    content: Value,
) -> Value {
    let next = (offset + returned < total).then_some(offset + returned);
    json!({
        "output_handle": handle,
        "format": format,
        "offset": offset,
        "limit": limit,
        "returned": returned,
        "total": total,
        "next_offset": next,
        "eof": next.is_none(),
        "content": content,
    })
}

fn valid_ext(ext: &str) -> bool {
    matches!(ext, "json" | "md" | "bin")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(name: &str, clock: Clock, ttl: u64) -> (PathBuf, HandleStore) {
        let d = std::env::temp_dir().join(format!("ochre-out-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        (d.clone(), HandleStore::new(&d, clock, ttl))
    }

    #[test]
    fn items_page_and_concatenate_to_the_whole() {
        let (d, s) = store("items", Clock::System, 60_000);
        let pages: Vec<Value> = (0..45).map(|i| json!({"n": i, "t": "é".repeat(i)})).collect();
        let payload = Payload::Json(json!({"summary": {"total": 45}, "pages": pages}));
        let (meta, desc) = s.create("crawl", &payload).expect("create");
        assert!(valid_handle(&meta.output_handle));
        assert_eq!(desc["item_count"], 45);
        assert!(desc.to_string().len() < 2000);
        let mut got = Vec::new();
        let mut offset = 0;
        loop {
            let page = s.fetch(&meta.output_handle, offset, Some(10), "auto").expect("page");
            let returned = page["returned"].as_u64().expect("returned");
            assert!(returned <= 10);
            got.extend(page["content"].as_array().expect("items").iter().cloned());
            match page["next_offset"].as_u64() {
                Some(n) => {
                    assert_eq!(page["eof"], false);
                    assert_eq!(n, offset + returned);
                    offset = n;
                }
                None => {
                    assert_eq!(page["eof"], true);
                    break;
                }
            }
        }
        assert_eq!(got, pages);
        std::fs::remove_dir_all(&d).expect("cleanup");
    }

    #[test]
    fn bytes_page_on_char_boundaries_and_rebuild_the_text() {
        let (d, s) = store("bytes", Clock::System, 60_000);
        let text = "añb€c😀".repeat(500);
        let (meta, desc) = s.create("read_page", &Payload::Text(text.clone())).expect("create");
        assert!(desc["preview"].as_str().expect("preview").len() <= MAX_PREVIEW_BYTES);
        let mut got = String::new();
        let mut offset = 0;
        loop {
            let page = s.fetch(&meta.output_handle, offset, Some(7), "bytes").expect("page");
            got.push_str(page["content"].as_str().expect("text"));
            match page["next_offset"].as_u64() {
                Some(n) => offset = n,
                None => break,
            }
        }
        assert_eq!(got, text);
        let err = s.fetch(&meta.output_handle, 2, Some(7), "bytes").expect_err("mid-char");
        assert_eq!(err.details["field"], "offset");
        std::fs::remove_dir_all(&d).expect("cleanup");
    }

    #[test]
    fn bad_unknown_and_expired_handles_are_not_found_and_swept() {
        let (d, s) = store("expiry", Clock::Fixed(1_000_000), 0);
        let (meta, _) = s.create("t", &Payload::Text("x".into())).expect("create");
        for h in ["../../etc/passwd", "oh_AAAAAAAAAAAA", "oh_aaaaaaaaaaaa", &meta.output_handle] {
            assert_eq!(
                s.fetch(h, 0, None, "auto").expect_err(h).code,
                ochre_protocol::Code::OutputHandleNotFound
            );
        }
        assert_eq!(s.sweep(), 1);
        assert!(std::fs::read_dir(d.join("output")).expect("dir").next().is_none());
        // Swept, it is still told as expired (not as never given out).
        let err = s.fetch(&meta.output_handle, 0, None, "auto").expect_err("swept");
        assert_eq!(err.code, ochre_protocol::Code::OutputHandleNotFound);
        assert!(err.message.contains("expired"), "{}", err.message);
        let err = s.fetch("oh_AAAAAAAAAAAA", 0, None, "auto").expect_err("unknown");
        assert!(err.message.contains("does not exist"), "{}", err.message);
        std::fs::remove_dir_all(&d).expect("cleanup");
    }
}
