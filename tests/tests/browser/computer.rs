//! The coordinate tier over MCP: the `computer` tool driven in Anthropic's
//! action format and in OpenAI's on a canvas app from npm (signature_pad: a
//! drawing pad), every effect read back from the app itself (its strokes), the
//! page's fields and its own event log.

use anyhow::Result;
use ochre_tests::*;
use serde_json::{Value, json};

/// What the app and the page hold now.
async fn state(client: &Client) -> Result<Value> {
    let code = "({strokes: pad.toData().map(s => s.points.map(p => [Math.round(p.x), Math.round(p.y)])), \
                note: document.getElementById('note').value, seen, scrollY, \
                selection: getSelection().toString().trim()})";
    Ok(client.tool_json("javascript_tool", json!({"code": code})).await?["value"].clone())
}

fn near(p: &Value, x: i64, y: i64) -> bool {
    let (px, py) = (p[0].as_i64().unwrap_or(-99), p[1].as_i64().unwrap_or(-99));
    (px - x).abs() <= 2 && (py - y).abs() <= 2
}

#[tokio::test]
async fn computer_actions_in_both_vendors_formats_drive_a_canvas_app() -> Result<()> {
    let mounts = vec![("/canvas-vendor/".to_owned(), npm_modules("canvas")?)];
    let site = SiteServer::start_with(sites_dir(), mounts).await?;
    let data = TempDir::new("computer");
    let client = stdio_client(data.path(), &[], &[]).await?;
    navigate(&client, &site.url("canvas/pad.html")).await?;
    let act = |args: Value| client.tool_text("computer", args);

    // A screenshot says how its pixels map to the viewport's CSS pixels.
    let shot = client.tool("computer", json!({"action": "screenshot"})).await?;
    let said = texts(&shot);
    assert!(
        said.contains("screenshot 1024x576 px (image/webp)") && said.contains("image_x / 0.8,"),
        "{said}"
    );
    assert!(shot.content.iter().any(|c| c.as_image().is_some()), "no image");

    // Anthropic: a drag draws a stroke where it went (the pad is at 20, 80).
    act(json!({"action": "left_click_drag", "start_coordinate": [120, 130], "coordinate": [320, 230]})).await?;
    let s = state(&client).await?;
    let strokes = s["strokes"].as_array().cloned().unwrap_or_default();
    assert_eq!(strokes.len(), 1, "{s}");
    let points = strokes[0].as_array().cloned().unwrap_or_default();
    assert!(near(&points[0], 100, 50) && near(&points[points.len() - 1], 300, 150), "{s}");
    // OpenAI: a drag along a path.
    let path = json!([{"x": 120, "y": 280}, {"x": 220, "y": 330}, {"x": 420, "y": 280}]);
    act(json!({"type": "drag", "path": path})).await?;
    let s = state(&client).await?;
    let second = s["strokes"][1].as_array().cloned().unwrap_or_default();
    assert!(
        near(&second[0], 100, 200)
            && second.iter().any(|p| near(p, 200, 250))
            && near(&second[second.len() - 1], 400, 200),
        "{s}"
    );

    // Other buttons: a right click (Anthropic) and a wheel click (OpenAI).
    act(json!({"action": "right_click", "coordinate": [220, 180]})).await?;
    act(json!({"type": "click", "x": 230, "y": 190, "button": "wheel"})).await?;
    let s = state(&client).await?;
    assert_eq!(s["seen"]["contextmenu"], json!([[200, 100]]), "{s}");
    assert_eq!(s["seen"]["auxclick"], json!([2, 1]), "{s}");
    assert_eq!(s["strokes"].as_array().map(Vec::len), Some(2), "another button drew: {s}");

    // Clicks that select words: a double click, a triple click.
    act(json!({"type": "double_click", "x": 745, "y": 100})).await?;
    let s = state(&client).await?;
    assert_eq!(
        (s["selection"].as_str(), s["seen"]["dblclick"].as_i64()),
        (Some("quick"), Some(1)),
        "{s}"
    );
    act(json!({"action": "triple_click", "coordinate": [745, 100]})).await?;
    let s = state(&client).await?;
    assert_eq!(s["selection"], "The quick brown fox jumps over the lazy dog.", "{s}");

    // Typing and keys, in both formats.
    act(json!({"action": "left_click", "coordinate": [60, 34]})).await?;
    act(json!({"action": "type", "text": "hello"})).await?;
    act(json!({"action": "key", "text": "ctrl+a"})).await?;
    act(json!({"action": "type", "text": "bye"})).await?;
    assert_eq!(state(&client).await?["note"], "bye");
    act(json!({"type": "keypress", "keys": ["CTRL", "A"]})).await?;
    act(json!({"type": "type", "text": "ok"})).await?;
    assert_eq!(state(&client).await?["note"], "ok");
    act(json!({"action": "hold_key", "text": "shift", "duration": 0.1})).await?;
    let keys = state(&client).await?["seen"]["keys"].clone();
    let keys: Vec<&str> = keys.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert_eq!(keys[keys.len() - 2..], ["down:Shift", "up:Shift"], "{keys:?}");

    // The mouse's place, and a zoom on the pad.
    act(json!({"action": "mouse_move", "coordinate": [400, 300]})).await?;
    let at = client.tool_json("computer", json!({"action": "cursor_position"})).await?;
    assert_eq!(at, json!({"x": 400.0, "y": 300.0}));
    let zoom =
        client.tool("computer", json!({"action": "zoom", "region": [20, 80, 620, 380]})).await?;
    assert!(
        texts(&zoom).starts_with(
            "screenshot 600x300 px (image/webp) of the viewport's (20, 80) to (620, 380)"
        ),
        "{}",
        texts(&zoom)
    );

    // The wheel scrolls: three clicks down (Anthropic), one back up (OpenAI).
    act(json!({"action": "scroll", "coordinate": [640, 400], "scroll_direction": "down", "scroll_amount": 3})).await?;
    act(json!({"type": "scroll", "x": 640, "y": 400, "scroll_x": 0, "scroll_y": -100})).await?;
    let wait = "window.scrollY === 200";
    client.tool_text("wait_for", json!({"type": "function", "value": wait})).await?;

    // Bad input is refused, naming the field; nothing is sent.
    for (args, field) in [
        (json!({"action": "fly"}), "action"),
        (json!({"action": "left_click", "type": "click"}), "action"),
        (json!({"action": "left_click_drag", "coordinate": [1, 1]}), "start_coordinate"),
        (json!({"type": "keypress", "keys": ["hyper"]}), "keys"),
        (json!({"action": "zoom", "region": [10, 10, 5, 5]}), "region"),
        (json!({"action": "screenshot", "image_format": "gif"}), "format"),
        (json!({"action": "screenshot", "image_long_edge": 8}), "long_edge"),
    ] {
        let err = client.tool_error("computer", args.clone()).await?;
        assert_eq!(err["field"], field, "{args}: {err}");
    }
    assert_eq!(state(&client).await?["strokes"].as_array().map(Vec::len), Some(2));
    Ok(())
}

/// The red 10x10 targets of `targets.html` found in a decoded RGBA (or RGB)
/// image: the centre of each red blob, in image pixels.
fn red_blobs(rgba: &[u8], channels: usize, w: usize, h: usize) -> Vec<(f64, f64)> {
    let red = |i: usize| {
        let p = &rgba[i * channels..i * channels + 3];
        p[0] > 180 && p[1] < 90 && p[2] < 90
    };
    let mut seen = vec![false; w * h];
    let mut out = Vec::new();
    for start in 0..w * h {
        if seen[start] || !red(start) {
            continue;
        }
        let (mut sx, mut sy, mut n, mut stack) = (0.0, 0.0, 0.0, vec![start]);
        seen[start] = true;
        while let Some(i) = stack.pop() {
            let (x, y) = (i % w, i / w);
            sx += x as f64;
            sy += y as f64;
            n += 1.0;
            let mut near = Vec::new();
            if x > 0 {
                near.push(i - 1);
            }
            if x + 1 < w {
                near.push(i + 1);
            }
            if y > 0 {
                near.push(i - w);
            }
            if y + 1 < h {
                near.push(i + w);
            }
            for j in near {
                if !seen[j] && red(j) {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        out.push((sx / n + 0.5, sy / n + 0.5));
    }
    out
}

/// The numbers a screenshot's text gives: its mapping `x = X + image_x / S`.
fn mapping(said: &str) -> (f64, f64, f64) {
    let num = |after: &str| -> f64 {
        let rest = &said
            [said.find(after).unwrap_or_else(|| panic!("{after:?} in {said}")) + after.len()..];
        let n: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        n.parse().unwrap_or_else(|_| panic!("a number after {after:?} in {said}"))
    };
    (num("x = "), num("y = "), num("image_x / "))
}

/// A screenshot at the default size and format (a WebP at most 1024 pixels on
/// its longer side) is at most half the bytes of a PNG at the device's pixels
/// (what `computer` sent before), on real pages; and clicks placed from it,
/// its stated mapping applied, hit every 10x10 CSS-pixel target found in it
/// (each click checked where it lands: the page's server), at device scale 1
/// and 2.
#[tokio::test]
async fn screenshots_are_small_and_their_mapping_places_clicks_exactly() -> Result<()> {
    let site = SiteServer::start().await?;
    let data = TempDir::new("computer-targets");
    let client = stdio_client(data.path(), &[], &[]).await?;
    let (mut small, mut png) = (0usize, 0usize);
    for scale in [1.0, 2.0] {
        client.tool_json("emulate", json!({"scale": scale})).await?;
        for page in ["widgets.html", "texts.html", "checkout.html"] {
            navigate(&client, &site.url(page)).await?;
            let shot = |args: Value| client.tool("computer", args);
            let image = |r: &rmcp::model::CallToolResult| -> Result<usize> {
                let img = r.content.iter().find_map(|c| c.as_image()).expect("an image");
                Ok(base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &img.data)?
                    .len())
            };
            small += image(&shot(json!({"action": "screenshot"})).await?)?;
            let full =
                json!({"action": "screenshot", "image_format": "png", "image_long_edge": 4096});
            png += image(&shot(full).await?)?;
        }
        navigate(&client, &site.url("targets.html")).await?;
        let r = client.tool("computer", json!({"action": "screenshot"})).await?;
        let said = texts(&r);
        let img = r.content.iter().find_map(|c| c.as_image()).expect("an image");
        assert_eq!(img.mime_type, "image/webp", "{said}");
        let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &img.data)?;
        let mut dec = image_webp::WebPDecoder::new(std::io::Cursor::new(bytes))?;
        let (w, h) = dec.dimensions();
        let channels = if dec.has_alpha() { 4 } else { 3 };
        let mut px = vec![0u8; w as usize * h as usize * channels];
        dec.read_image(&mut px)?;
        let (x0, y0, s) = mapping(&said);
        assert!(w <= 1024 && h <= 1024, "{w}x{h}: {said}");
        let blobs = red_blobs(&px, channels, w as usize, h as usize);
        let want = client
            .tool_json("javascript_tool", json!({"code": "document.querySelectorAll('.t').length"}))
            .await?["value"]
            .as_u64()
            .unwrap_or(0);
        assert!(want >= 20, "the page has {want} targets");
        assert_eq!(blobs.len() as u64, want, "targets found in the image at scale {scale}: {said}");
        let before = site.recorded().len();
        for (ix, iy) in &blobs {
            let (x, y) = (x0 + ix / s, y0 + iy / s);
            client
                .tool_text("computer", json!({"action": "left_click", "coordinate": [x, y]}))
                .await?;
        }
        // (A `computer` click is raw input: its page's request is waited for here.)
        let mut hits = std::collections::BTreeSet::new();
        for _ in 0..100 {
            hits = site.recorded()[before..]
                .iter()
                .filter(|r| r.starts_with("hit="))
                .cloned()
                .collect();
            if hits.len() as u64 >= want {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(hits.len() as u64, want, "at scale {scale}, hits {hits:?} of {want}: {said}");
    }
    println!("default screenshots: {small} bytes; PNG at the device's pixels: {png} bytes");
    assert!(small * 2 <= png, "default {small} bytes against PNG {png}: not half");
    Ok(())
}

/// A point outside the viewport (a click, a drag's end, a step of a path, a
/// scroll, a move) is refused whole, naming the argument, before any event is
/// sent: the page's own log of pointer, mouse and wheel events stays empty. A
/// point inside is sent and logged (the log works).
#[tokio::test]
async fn computer_points_outside_the_viewport_are_refused_with_nothing_sent() -> Result<()> {
    let (site, _data, client) = site_and_client("computer-bounds", &[]).await?;
    navigate(&client, &site.url("index.html")).await?;
    let js = |code: &str| client.tool_json("javascript_tool", json!({"code": code}));
    let size = js("[innerWidth, innerHeight]").await?["value"].clone();
    assert_eq!(size, json!([1280, 720]), "the default viewport");
    js("window.inputLog = []; for (const t of ['pointerdown', 'pointerup', 'pointermove', 'mousedown', \
        'mouseup', 'mousemove', 'click', 'contextmenu', 'wheel']) \
        addEventListener(t, (e) => inputLog.push(t + ' ' + e.clientX + ',' + e.clientY), true); 0")
        .await?;
    for (args, field) in [
        (json!({"action": "left_click", "coordinate": [1280, 100]}), "coordinate"),
        (json!({"action": "right_click", "coordinate": [-1, 100]}), "coordinate"),
        (json!({"action": "mouse_move", "coordinate": [100, 720]}), "coordinate"),
        (
            json!({"action": "left_click_drag", "start_coordinate": [100, 100], "coordinate": [5280, 4720]}),
            "coordinate",
        ),
        (json!({"type": "click", "x": 100, "y": 900}), "x"),
        (
            json!({"type": "drag", "path": [{"x": 100, "y": 100}, {"x": 200, "y": 200}, {"x": 300, "y": -5}, {"x": 400, "y": 400}]}),
            "path",
        ),
        (
            json!({"action": "scroll", "coordinate": [2000, 100], "scroll_direction": "down"}),
            "coordinate",
        ),
    ] {
        let err = client.tool_error("computer", args.clone()).await?;
        assert_eq!(
            (err["code"].as_str(), err["field"].as_str()),
            (Some("INVALID_ARGUMENT"), Some(field)),
            "{args}: {err}"
        );
        assert!(
            err["message"].as_str().is_some_and(|m| m.contains("outside the viewport")),
            "{args}: {err}"
        );
    }
    let log = js("inputLog").await?["value"].clone();
    assert_eq!(log, json!([]), "events reached the page");
    client
        .tool_text("computer", json!({"action": "left_click", "coordinate": [1279, 719]}))
        .await?;
    let log = js("inputLog").await?["value"].clone();
    assert!(log.as_array().is_some_and(|l| l.iter().any(|e| e == "click 1279,719")), "{log}");
    Ok(())
}
