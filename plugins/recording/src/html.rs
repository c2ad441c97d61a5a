//! The HTML export: one self-contained page (inline CSS, screenshots as data URIs,
//! no scripts, nothing fetched) with a timeline of the recording's steps.

use base64::Engine;
use ochre_sdk::recorder::{self, Recording};

/// Escape text for HTML element content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222}\
h1{font-size:1.4rem;margin:0}.meta{color:#666;margin:.3rem 0 1.5rem}\
ol{list-style:none;padding:0;border-left:3px solid #ddd}\
li{margin:0 0 1.2rem;padding:.2rem 0 .2rem 1rem;position:relative}\
li:before{content:'';position:absolute;left:-8px;top:.55rem;width:13px;height:13px;border-radius:50%;background:#2a7}\
li.fail:before{background:#c33}\
.tool{font-weight:600;font-family:ui-monospace,monospace}.n{color:#888;margin-right:.4rem}\
.intent{font-style:italic;color:#444}.outcome{margin:.2rem 0}.fail .outcome{color:#c33}\
.url{color:#666;font-size:.85rem;word-break:break-all}\
pre{background:#f6f6f6;padding:.5rem;overflow:auto;font-size:.8rem;max-height:12rem}\
img,video{max-width:100%;border:1px solid #ccc;margin-top:.4rem}";

/// Render recording `id` (`rec` as the recorder loads it).
pub fn render(id: &str, rec: &Recording) -> String {
    let (meta, steps) = (&rec.meta, &rec.steps);
    let title = meta.label.as_deref().unwrap_or(id);
    let mut h = String::new();
    h.push_str("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str(&format!("<title>ochre recording: {}</title>", esc(title)));
    h.push_str(&format!("<style>{STYLE}</style></head><body>"));
    h.push_str(&format!("<h1>{}</h1>", esc(title)));
    h.push_str(&format!(
        "<p class=\"meta\">Recording <code>{}</code> · started {} · {} steps ({} failed){}</p><ol>",
        esc(id),
        esc(&meta.started_at),
        steps.len(),
        meta.failed_steps,
        meta.stopped_at.as_deref().map(|s| format!(" · stopped {}", esc(s))).unwrap_or_default()
    ));
    for s in steps {
        let ok = s.ok;
        h.push_str(if ok { "<li>" } else { "<li class=\"fail\">" });
        h.push_str(&format!(
            "<span class=\"n\">#{}</span><span class=\"tool\">{}</span> <span class=\"n\">{} ms</span>",
            s.step,
            esc(&s.tool),
            s.duration_ms
        ));
        if let Some(i) = &s.intent {
            h.push_str(&format!("<div class=\"intent\">intent: {}</div>", esc(i)));
        }
        let outcome = match (ok, &s.error) {
            (false, Some(code)) => format!("{code}: {}", s.outcome),
            _ => s.outcome.clone(),
        };
        h.push_str(&format!("<div class=\"outcome\">{}</div>", esc(&outcome)));
        if let Some(url) = &s.url {
            h.push_str(&format!(
                "<div class=\"url\">{} · {}</div>",
                esc(s.tab.as_deref().unwrap_or("")),
                esc(url)
            ));
        }
        let args = serde_json::to_string_pretty(&s.args).unwrap_or_default();
        if args != "{}" && args != "null" {
            h.push_str(&format!("<pre>{}</pre>", esc(&args)));
        }
        // A video the step wrote (`page_video` stop): linked, and played
        // from its file when this page is opened from disk (the WebM).
        if s.tool == "page_video" {
            let files = video_files(&s.outcome);
            if let Some(webm) = files.iter().find(|f| f.ends_with(".webm")) {
                h.push_str(&format!(
                    "<video controls preload=\"metadata\" src=\"{}\"></video>",
                    esc(&file_url(webm))
                ));
            }
            for f in &files {
                h.push_str(&format!(
                    "<div class=\"url\">video: <a href=\"{}\">{}</a></div>",
                    esc(&file_url(f)),
                    esc(f)
                ));
            }
        }
        if let Some(file) = &s.screenshot
            && let Ok(bytes) = recorder::screenshot(id, file)
        {
            h.push_str(&format!(
                "<img alt=\"after step {}\" src=\"data:image/jpeg;base64,{}\">",
                s.step,
                base64::engine::general_purpose::STANDARD.encode(bytes)
            ));
        }
        h.push_str("</li>");
    }
    h.push_str("</ol></body></html>\n");
    h
}

/// The video files a `page_video` stop's summary names (`…, written to
/// PATH.mkv[ and PATH.webm]`).
fn video_files(outcome: &str) -> Vec<String> {
    let Some((_, written)) = outcome.split_once(", written to /") else { return Vec::new() };
    written
        .split(" and /")
        .map(|p| format!("/{p}"))
        .filter(|p| p.ends_with(".mkv") || p.ends_with(".webm"))
        .collect()
}

/// A `file://` URL of an absolute path, its bytes outside the unreserved
/// ones and `/` percent-encoded.
fn file_url(path: &str) -> String {
    let mut out = String::from("file://");
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_videos_files_are_found_and_linked() {
        let said =
            "9 frames, 1474 ms, 3 chapters, written to /d/e v/video-1.mkv and /d/e v/video-1.webm";
        assert_eq!(video_files(said), ["/d/e v/video-1.mkv", "/d/e v/video-1.webm"]);
        let said =
            "2 frames, 40 ms, 0 chapters (ended by its time bound), written to /d/video-1.mkv";
        assert_eq!(video_files(said), ["/d/video-1.mkv"]);
        assert!(video_files("recording to /d/video-1.mkv").is_empty());
        assert_eq!(file_url("/a b/v#1.webm"), "file:///a%20b/v%231.webm");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
