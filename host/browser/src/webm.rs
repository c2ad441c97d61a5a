//! A video's WebM copy, which a browser's `<video>` plays: VP8, the
//! Matroska file's frames at their own times and its chapters, with the
//! pointer of ochre's own mouse input drawn where it was from the moment it
//! got there. FFmpeg makes it, when it is installed (`OCHRE_FFMPEG`, else
//! `ffmpeg` on `PATH`; Debian's `ffmpeg` package): no encoder is compiled into
//! ochre (a VP8 or AV1 encoder is a C library or a large Rust crate), as
//! Playwright's videos are made by an FFmpeg of its own.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest time a WebM takes to write before it is given up.
const WRITE_BOUND: Duration = Duration::from_secs(120);
/// The most pointer positions drawn (a long drag's are thinned out).
const POINTS_MAX: usize = 300;

/// Where FFmpeg is, if it is.
pub(super) fn ffmpeg() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("OCHRE_FFMPEG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path).map(|d| d.join("ffmpeg")).find(|p| p.is_file())
    })
}

/// The filters that draw the pointer: at each position (`at` ms, `x` and
/// `y` in the frames' pixels) a white-edged magenta square until the next
/// position (or `end_ms`); then even sizes and 4:2:0, as VP8 takes them.
fn filters(points: &[(u64, f64, f64)], end_ms: u64) -> String {
    let step = points.len().div_ceil(POINTS_MAX).max(1);
    let kept: Vec<&(u64, f64, f64)> = points.iter().step_by(step).collect();
    let mut out: Vec<String> = Vec::new();
    for (i, (at, x, y)) in kept.iter().enumerate() {
        let until = kept.get(i + 1).map_or(end_ms, |next| next.0).max(*at);
        #[allow(clippy::cast_precision_loss)]
        let (a, b) = (*at as f64 / 1000.0, until as f64 / 1000.0 + 0.001);
        let (x, y) = (x.round(), y.round());
        for (half, colour) in [(10.0, "white"), (8.0, "magenta")] {
            out.push(format!(
                "drawbox=x={}:y={}:w={}:h={}:color={colour}:t=fill:enable='between(t,{a:.3},{b:.3})'",
                x - half,
                y - half,
                half * 2.0,
                half * 2.0,
            ));
        }
    }
    out.push("scale=trunc(iw/2)*2:trunc(ih/2)*2".into());
    out.push("format=yuv420p".into());
    out.join(",\n")
}

/// Write `mkv`'s WebM copy beside it (`.webm`), the pointer drawn at
/// `points`; its path, or why there is none.
pub(super) async fn write(
    mkv: &Path,
    points: &[(u64, f64, f64)],
    end_ms: u64,
) -> Result<PathBuf, String> {
    let Some(ffmpeg) = ffmpeg() else {
        return Err("no ffmpeg on PATH (install ffmpeg, or set OCHRE_FFMPEG, for a WebM)".into());
    };
    let out = mkv.with_extension("webm");
    let script = mkv.with_extension("filters.txt");
    std::fs::write(&script, filters(points, end_ms))
        .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    let mut cmd = tokio::process::Command::new(&ffmpeg);
    cmd.args(["-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-i"])
        .arg(mkv)
        .arg("-filter_script:v")
        .arg(&script)
        // Each frame at its own time (no frame made up or dropped); VP8
        // as fast as it goes, of a quality that keeps text readable.
        .args(["-fps_mode", "passthrough", "-c:v", "libvpx", "-deadline", "realtime"])
        .args(["-cpu-used", "8", "-b:v", "2M", "-crf", "10", "-an"])
        .arg(&out)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let ran = tokio::time::timeout(WRITE_BOUND, cmd.output()).await;
    let _ = std::fs::remove_file(&script);
    let failed = |why: String| {
        let _ = std::fs::remove_file(&out);
        Err(why)
    };
    match ran {
        Err(_) => failed(format!("ffmpeg took over {} s", WRITE_BOUND.as_secs())),
        Ok(Err(e)) => failed(format!("cannot run {}: {e}", ffmpeg.display())),
        Ok(Ok(o)) if !o.status.success() => {
            let err = String::from_utf8_lossy(&o.stderr);
            let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            failed(format!("ffmpeg failed ({}): {last}", o.status))
        }
        Ok(Ok(_)) => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pointer_stays_where_it_went_until_it_moves() {
        let f = filters(&[(100, 50.4, 20.0), (600, 70.0, 90.0)], 1_000);
        let lines: Vec<&str> = f.lines().collect();
        assert_eq!(lines.len(), 6, "{f}");
        assert!(lines[1].contains("x=42:y=12:w=16:h=16:color=magenta"), "{f}");
        assert!(lines[1].contains("between(t,0.100,0.601)"), "{f}");
        assert!(lines[3].contains("between(t,0.600,1.001)"), "{f}");
        assert!(filters(&[], 10).starts_with("scale="));
        let many: Vec<(u64, f64, f64)> = (0..1000).map(|i| (i, 1.0, 1.0)).collect();
        assert!(filters(&many, 2_000).lines().count() <= POINTS_MAX * 2 + 2);
    }
}
