//! `capture`: a screenshot sized for the model that reads it. Computer-use
//! models are tuned for screens of about 1024 pixels on the longer side (XGA;
//! they scale larger ones down themselves, and pay for every pixel), and a
//! lossy WebP of a page is a fraction of a PNG's bytes at the device's pixels; the answer says exactly how the
//! image's pixels map to the viewport's CSS pixels, so that coordinates read
//! off it stay exact. The defaults were chosen by measurement
//! (`docs/bench/screenshots.md`).

use std::time::Duration;

use base64::Engine as _;
use chromiumoxide::Page;
use serde_json::json;

use ochre_protocol::ToolError;
use ochre_protocol::page_ops::{Capture, Captured};

use super::{BrowserManager, raw_command};

/// The default format.
pub const DEFAULT_FORMAT: &str = "webp";
/// The default quality (WebP and JPEG).
pub const DEFAULT_QUALITY: u8 = 60;
/// The default longest side, in pixels.
pub const DEFAULT_LONG_EDGE: u32 = 1024;

fn bad(field: &str, why: impl Into<String>) -> ToolError {
    ToolError::invalid_argument(field, why)
}

/// A capture's arguments, checked: (format, quality, longer side).
fn checked(a: &Capture) -> Result<(&'static str, Option<u8>, u32), ToolError> {
    let format = match a.format.as_deref().unwrap_or(DEFAULT_FORMAT) {
        "webp" => "webp",
        "jpeg" | "jpg" => "jpeg",
        "png" => "png",
        other => return Err(bad("format", format!("{other:?} is not webp, jpeg or png"))),
    };
    let quality = match (format, a.quality) {
        ("png", Some(_)) => return Err(bad("quality", "a PNG has no quality: give webp or jpeg")),
        ("png", None) => None,
        (_, Some(q)) if !(1..=100).contains(&q) => {
            return Err(bad("quality", format!("{q} is not between 1 and 100")));
        }
        (_, q) => Some(q.unwrap_or(DEFAULT_QUALITY)),
    };
    let long_edge = a.long_edge.unwrap_or(DEFAULT_LONG_EDGE);
    if !(64..=4096).contains(&long_edge) {
        return Err(bad("long_edge", format!("{long_edge} is not between 64 and 4096 pixels")));
    }
    if let Some([x, y, w, h]) = a.clip
        && !([x, y, w, h].iter().all(|v| v.is_finite()) && w >= 1.0 && h >= 1.0)
    {
        return Err(bad("clip", "clip needs finite x, y and a width and height of at least 1"));
    }
    Ok((format, quality, long_edge))
}

/// An image's width and height from its header: PNG, JPEG or WebP.
pub fn image_size(data: &[u8]) -> Option<(u32, u32)> {
    let be16 = |i: usize| Some(u32::from(u16::from_be_bytes(data.get(i..i + 2)?.try_into().ok()?)));
    let le16 = |i: usize| Some(u32::from(u16::from_le_bytes(data.get(i..i + 2)?.try_into().ok()?)));
    let le24 = |i: usize| {
        let b = data.get(i..i + 3)?;
        Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
    };
    if data.starts_with(b"\x89PNG") {
        let w = u32::from_be_bytes(data.get(16..20)?.try_into().ok()?);
        let h = u32::from_be_bytes(data.get(20..24)?.try_into().ok()?);
        return Some((w, h));
    }
    if data.starts_with(b"RIFF") && data.get(8..12) == Some(b"WEBP") {
        return match data.get(12..16)? {
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            b"VP8L" => {
                let b = u32::from_le_bytes(data.get(21..25)?.try_into().ok()?);
                Some(((b & 0x3fff) + 1, ((b >> 14) & 0x3fff) + 1))
            }
            b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
            _ => None,
        };
    }
    if data.starts_with(&[0xff, 0xd8]) {
        // Segments up to the frame header (SOF0..SOF15 but DHT, JPG, DAC).
        let mut i = 2;
        while i + 9 < data.len() {
            if data[i] != 0xff {
                return None;
            }
            let marker = data[i + 1];
            let len = be16(i + 2)? as usize;
            if (0xc0..=0xcf).contains(&marker) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
                return Some((be16(i + 7)?, be16(i + 5)?));
            }
            i += 2 + len;
        }
    }
    None
}

impl BrowserManager {
    /// The `capture` page operation: see [`Capture`].
    pub(super) async fn capture(&self, page: &Page, a: &Capture) -> Result<Captured, ToolError> {
        let (format, quality, long_edge) = checked(a)?;
        let read =
            self.eval(page, "[innerWidth, innerHeight, devicePixelRatio, scrollX, scrollY]", true);
        let v = tokio::time::timeout(Duration::from_secs(5), read)
            .await
            .map_err(|_| ToolError::timeout("the page did not say its viewport within 5 s"))??;
        let n = |i: usize| v[i].as_f64().unwrap_or(0.0);
        let (vw, vh, dpr, sx, sy) = (n(0), n(1), n(2).max(0.1), n(3), n(4));
        if vw < 1.0 || vh < 1.0 {
            return Err(ToolError::js_error("the page has no viewport"));
        }
        let [x, y, w, h] = a.clip.unwrap_or([0.0, 0.0, vw, vh]);
        // Image pixels per CSS pixel: the device's, or fewer to fit the edge.
        let scale = dpr.min(f64::from(long_edge) / w.max(h));
        let mut params = json!({
            "format": format,
            "clip": {"x": sx + x, "y": sy + y, "width": w, "height": h, "scale": scale / dpr},
        });
        if let Some(q) = quality {
            params["quality"] = json!(q);
        }
        let shot = super::bounded(30_000, "capture", async {
            raw_command(page, "Page.captureScreenshot", params).await
        })
        .await?;
        let data = shot["data"].as_str().unwrap_or_default().to_owned();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&data)
            .map_err(|e| ToolError::internal(format!("the screenshot is not base64: {e}")))?;
        let (width, height) = image_size(&bytes)
            .ok_or_else(|| ToolError::internal("the screenshot's size could not be read"))?;
        Ok(Captured {
            data,
            mime: format!("image/{format}"),
            width,
            height,
            // As the image came (its size rounded): the mapping is exact.
            scale: f64::from(width) / w,
            x,
            y,
            css_width: w,
            css_height: h,
            viewport_width: vw,
            viewport_height: vh,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Capture, checked, image_size};

    #[test]
    fn arguments_are_checked_before_anything_is_taken() {
        let ok = checked(&Capture::default()).expect("the defaults");
        assert_eq!(ok, ("webp", Some(60), 1024));
        let png = Capture { format: Some("png".into()), ..Capture::default() };
        assert_eq!(checked(&png).expect("png").1, None);
        for bad in [
            Capture { format: Some("gif".into()), ..Capture::default() },
            Capture { format: Some("png".into()), quality: Some(50), ..Capture::default() },
            Capture { quality: Some(0), ..Capture::default() },
            Capture { long_edge: Some(10), ..Capture::default() },
            Capture { clip: Some([0.0, 0.0, f64::NAN, 10.0]), ..Capture::default() },
            Capture { clip: Some([0.0, 0.0, 0.0, 10.0]), ..Capture::default() },
        ] {
            assert!(checked(&bad).is_err(), "{bad:?} was taken");
        }
    }

    #[test]
    fn sizes_are_read_from_each_formats_header() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(640u32.to_be_bytes());
        png.extend(360u32.to_be_bytes());
        assert_eq!(image_size(&png), Some((640, 360)));
        // A lossy WebP: RIFF, WEBP, "VP8 ", then the key frame's size.
        let mut webp = b"RIFF\0\0\0\0WEBPVP8 \0\0\0\0".to_vec();
        webp.extend([0, 0, 0, 0x9d, 0x01, 0x2a, 0, 0, 0, 0]);
        webp[26..28].copy_from_slice(&1024u16.to_le_bytes());
        webp[28..30].copy_from_slice(&576u16.to_le_bytes());
        assert_eq!(image_size(&webp), Some((1024, 576)));
        // A JPEG: SOI, an APP0 segment, then SOF0 with height and width.
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0];
        jpeg.extend([0xff, 0xc0, 0, 17, 8]);
        jpeg.extend(720u16.to_be_bytes());
        jpeg.extend(1280u16.to_be_bytes());
        jpeg.extend([0; 12]);
        assert_eq!(image_size(&jpeg), Some((1280, 720)));
        assert_eq!(image_size(b"GIF89a"), None);
    }
}
