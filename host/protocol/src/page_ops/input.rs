//! Screenshots and raw input: what a model sees and the gestures it sends.

use super::*;

/// A screenshot sized for the model that reads it (see [`Captured`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// `webp` (the default), `jpeg` or `png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// 1 to 100 (`webp` and `jpeg`; default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    /// The image's longer side at most, in pixels (64 to 4096; default 1024).
    /// Never more than the device's own pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_edge: Option<u32>,
    /// A region of the viewport (x, y, width, height in CSS pixels); default
    /// the whole viewport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip: Option<[f64; 4]>,
}

/// What [`Capture`] took: the image and how its pixels map to the
/// viewport's CSS pixels (`css = origin + image / scale`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Captured {
    /// The image, base64.
    pub data: String,
    /// `image/webp`, `image/jpeg` or `image/png`.
    pub mime: String,
    /// The image's size in pixels.
    pub width: u32,
    /// As `width`.
    pub height: u32,
    /// Image pixels per CSS pixel.
    pub scale: f64,
    /// Where the image starts in the viewport (CSS pixels).
    pub x: f64,
    /// As `x`.
    pub y: f64,
    /// The region's size in CSS pixels.
    pub css_width: f64,
    /// As `css_width`.
    pub css_height: f64,
    /// The viewport's size in CSS pixels.
    pub viewport_width: f64,
    /// As `viewport_width`.
    pub viewport_height: f64,
}

/// Raw input at viewport coordinates, in order (see [`Gesture`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gestures {
    /// The events.
    pub events: Vec<Gesture>,
}

/// A button of [`Gesture::Down`] or [`Gesture::Up`], and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Press {
    /// Where.
    pub x: f64,
    /// Where.
    pub y: f64,
    /// `left` (default), `middle` or `right`.
    #[serde(default)]
    pub button: Option<String>,
    /// 1 (default); 2 for a double click's second press, 3 for a triple's third.
    #[serde(default)]
    pub count: Option<u32>,
}

impl Press {
    /// The left button at (`x`, `y`), the `count`th press of a click.
    #[must_use]
    pub fn left(x: f64, y: f64, count: u32) -> Self {
        Self { x, y, button: Some("left".to_owned()), count: Some(count) }
    }
}

/// One input event of [`Gestures`]: x and y are CSS pixels of the viewport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Gesture {
    /// Move the mouse (buttons held stay held: a drag).
    Move {
        /// Where.
        x: f64,
        /// Where.
        y: f64,
    },
    /// Press a button.
    Down(Press),
    /// Release a button (its `count` as the press's).
    Up(Press),
    /// Turn the wheel over a point (CSS pixels: positive `dy` scrolls down).
    Wheel {
        /// Where.
        x: f64,
        /// Where.
        y: f64,
        /// Horizontal.
        #[serde(default)]
        dx: f64,
        /// Vertical.
        #[serde(default)]
        dy: f64,
    },
    /// Hold a key (or a chord's keys) down.
    KeyDown {
        /// `Shift`, `a`, `Control+a`.
        key: String,
    },
    /// Release what [`Gesture::KeyDown`] held.
    KeyUp {
        /// As held.
        key: String,
    },
    /// Press and release a key or chord.
    Key {
        /// `Enter`, `Control+a`.
        key: String,
    },
    /// Type text.
    Text {
        /// What.
        text: String,
    },
    /// Wait (at most 10 s).
    Pause {
        /// How long.
        ms: u64,
    },
}

/// What [`Gestures`] did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Gestured {
    /// How many events were sent.
    pub events: usize,
    /// Where the mouse is now (CSS pixels), if an event put it somewhere.
    #[serde(default)]
    pub x: Option<f64>,
    /// As `x`.
    #[serde(default)]
    pub y: Option<f64>,
}
