//! Screen sizes, the model's (scaled) coordinate space, and the mapping between them.
//!
//! A model sees screenshots shrunk to its own size (the "model space") and answers with
//! coordinates in that space; the display needs the screen's own pixels. [`Scaling`] maps both
//! ways and checks every coordinate against the model space, so an out-of-range click is an
//! error the model can read rather than a click somewhere else.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::action::{Point, Rect};

/// A width and height in pixels, both at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Size {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
}

impl Size {
    /// A size; callers give non-zero dimensions.
    pub const fn new(width: u32, height: u32) -> Self {
        Self { width, height }
    }

    /// Width × height.
    pub fn area(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// A size or scale mode text that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "\"{text}\" is not a valid {what}: write it as WIDTHxHEIGHT with both at least 1, e.g. \"1280x800\"{extra}"
)]
pub struct ParseSizeError {
    text: String,
    what: &'static str,
    extra: &'static str,
}

/// The largest width or height accepted, far above any real display; keeps area arithmetic and
/// `u32` pixel maths comfortably in range.
const MAX_DIMENSION: u32 = 1 << 15;

impl FromStr for Size {
    type Err = ParseSizeError;

    /// Reads `1280x800` (also `1280X800` and `1280×800`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseSizeError {
            text: s.to_string(),
            what: "size",
            extra: "",
        };
        let t = s.trim();
        let (w, h) = t.split_once(['x', 'X', '×']).ok_or_else(err)?;
        let width: u32 = w.trim().parse().map_err(|_| err())?;
        let height: u32 = h.trim().parse().map_err(|_| err())?;
        if width == 0 || height == 0 || width > MAX_DIMENSION || height > MAX_DIMENSION {
            return Err(err());
        }
        Ok(Self { width, height })
    }
}

/// How the model's coordinate space is chosen from the screen's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScaleMode {
    /// Keep the aspect ratio and shrink (never enlarge) until the long edge is at most
    /// [`AUTO_MAX_LONG_EDGE`] px and the area at most [`AUTO_MAX_AREA`] px: the largest image
    /// Claude models take without resizing it themselves.
    #[default]
    Auto,
    /// The model works in the screen's own pixels.
    None,
    /// 1024×768, whatever the screen's aspect ratio (the reference's XGA target). On a screen
    /// of another aspect ratio the two axes scale differently; that is what was asked for.
    Xga,
    /// 1280×800, whatever the screen's aspect ratio (the reference's WXGA target); as for XGA.
    Wxga,
    /// Exactly this size, whatever the screen's size or aspect ratio (it may even enlarge).
    Exact(Size),
}

/// [`ScaleMode::Auto`]'s limit on the long edge, in pixels.
pub const AUTO_MAX_LONG_EDGE: u32 = 1568;
/// [`ScaleMode::Auto`]'s limit on the area, in pixels (1.15 megapixels, read as the smaller
/// decimal million so the result is within the limit either way it is read).
pub const AUTO_MAX_AREA: u64 = 1_150_000;

impl FromStr for ScaleMode {
    type Err = ParseSizeError;

    /// Reads `auto` (or `default`), `none` (or `off`), `xga`, `wxga`, or `WIDTHxHEIGHT`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "default" => Ok(Self::Auto),
            "none" | "off" => Ok(Self::None),
            "xga" => Ok(Self::Xga),
            "wxga" => Ok(Self::Wxga),
            _ => s.parse::<Size>().map(Self::Exact).map_err(|_| ParseSizeError {
                text: s.to_string(),
                what: "scale mode",
                extra: ", or one of \"auto\", \"none\", \"xga\" (1024x768), \"wxga\" (1280x800)",
            }),
        }
    }
}

impl fmt::Display for ScaleMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::None => f.write_str("none"),
            Self::Xga => f.write_str("xga"),
            Self::Wxga => f.write_str("wxga"),
            Self::Exact(size) => write!(f, "{size}"),
        }
    }
}

impl ScaleMode {
    /// The model's size for a screen of `screen`'s size.
    pub fn model_size(&self, screen: Size) -> Size {
        match self {
            Self::None => screen,
            Self::Xga => Size::new(1024, 768),
            Self::Wxga => Size::new(1280, 800),
            Self::Exact(size) => *size,
            Self::Auto => auto_size(screen),
        }
    }
}

/// The largest size of `screen`'s aspect ratio within the Auto limits (never larger than
/// `screen`).
fn auto_size(screen: Size) -> Size {
    let (w, h) = (f64::from(screen.width), f64::from(screen.height));
    let long = w.max(h);
    let scale = 1f64
        .min(f64::from(AUTO_MAX_LONG_EDGE) / long)
        .min((AUTO_MAX_AREA as f64 / (w * h)).sqrt());
    if scale >= 1.0 {
        return screen;
    }
    // Rounding down keeps both limits; the small nudge stops 1567.9999… from losing a pixel,
    // and the clamps and loop below put back any pixel the nudge (or rounding) pushed over.
    let mut width =
        ((w * scale + 1e-6).floor() as u32).clamp(1, screen.width.min(AUTO_MAX_LONG_EDGE));
    let mut height =
        ((h * scale + 1e-6).floor() as u32).clamp(1, screen.height.min(AUTO_MAX_LONG_EDGE));
    while u64::from(width) * u64::from(height) > AUTO_MAX_AREA && width > 1 && height > 1 {
        if width >= height {
            width -= 1;
        } else {
            height -= 1;
        }
    }
    Size::new(width, height)
}

/// A coordinate the model gave that is not on the screen, described in the model's own space.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CoordinateError {
    /// A point outside the model space.
    #[error(
        "coordinate [{x}, {y}] is outside the screen: x must be 0–{max_x} and y 0–{max_y} (the screen is {size})",
        max_x = size.width.saturating_sub(1),
        max_y = size.height.saturating_sub(1)
    )]
    OutOfScreen {
        /// The x given.
        x: i64,
        /// The y given.
        y: i64,
        /// The screen's size in the model's space.
        size: Size,
    },
    /// A region that is empty, reversed, or not within the model space.
    #[error(
        "region [{x1}, {y1}, {x2}, {y2}] is not valid: it needs 0 ≤ x1 < x2 ≤ {w} and 0 ≤ y1 < y2 ≤ {h} (the screen is {size})",
        w = size.width,
        h = size.height
    )]
    BadRegion {
        /// Left.
        x1: i64,
        /// Top.
        y1: i64,
        /// Right (exclusive).
        x2: i64,
        /// Bottom (exclusive).
        y2: i64,
        /// The screen's size in the model's space.
        size: Size,
    },
    /// A Qwen3-VL relative coordinate outside 0–1000 (or not a number).
    #[error(
        "coordinate [{x}, {y}] is outside the screen: x and y are relative, each 0–1000 ([0, 0] is the top-left corner, [1000, 1000] the bottom-right; the screen is {size} pixels)"
    )]
    OutOfRelative {
        /// The x given.
        x: f64,
        /// The y given.
        y: f64,
        /// The screen's real size.
        size: Size,
    },
}

/// The mapping between the screen's pixels and the model's coordinate space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scaling {
    /// The screen's real size.
    pub screen: Size,
    /// The size the model sees (screenshots are resized to it; its coordinates are in it).
    pub model: Size,
}

impl Scaling {
    /// The mapping for a screen of size `screen` under `mode`.
    pub fn new(screen: Size, mode: ScaleMode) -> Self {
        Self {
            screen,
            model: mode.model_size(screen),
        }
    }

    /// The mapping that changes nothing.
    pub fn identity(screen: Size) -> Self {
        Self {
            screen,
            model: screen,
        }
    }

    /// Whether model and screen coordinates are the same.
    pub fn is_identity(&self) -> bool {
        self.screen == self.model
    }

    /// The screen pixel under the model's pixel `(x, y)`: the one containing that pixel's
    /// centre, `floor((x + 0.5) · screen / model)`, so both spaces agree on what was pointed at.
    /// Fails when `(x, y)` is outside the model space (`0 ≤ x < model.width`, same for y).
    pub fn to_screen(&self, x: i64, y: i64) -> Result<Point, CoordinateError> {
        let (mw, mh) = (i64::from(self.model.width), i64::from(self.model.height));
        if !(0..mw).contains(&x) || !(0..mh).contains(&y) {
            return Err(CoordinateError::OutOfScreen {
                x,
                y,
                size: self.model,
            });
        }
        Ok(Point {
            x: map_center(x as u64, self.model.width, self.screen.width),
            y: map_center(y as u64, self.model.height, self.screen.height),
        })
    }

    /// The model's pixel over the screen pixel `p` (the inverse of [`Self::to_screen`]; exact
    /// for model coordinates whenever the model space is no larger than the screen). Points off
    /// the screen are clamped to its edge.
    pub fn to_model(&self, p: Point) -> (u32, u32) {
        let x = u64::from(p.x.min(self.screen.width.saturating_sub(1)));
        let y = u64::from(p.y.min(self.screen.height.saturating_sub(1)));
        (
            map_center(x, self.screen.width, self.model.width),
            map_center(y, self.screen.height, self.model.height),
        )
    }

    /// The screen rectangle covering the model's region `[x1, y1, x2, y2]` (right and bottom
    /// exclusive). Fails unless `0 ≤ x1 < x2 ≤ model.width` and likewise for y.
    pub fn region_to_screen(&self, region: [i64; 4]) -> Result<Rect, CoordinateError> {
        let [x1, y1, x2, y2] = region;
        let (mw, mh) = (i64::from(self.model.width), i64::from(self.model.height));
        if !(0 <= x1 && x1 < x2 && x2 <= mw && 0 <= y1 && y1 < y2 && y2 <= mh) {
            return Err(CoordinateError::BadRegion {
                x1,
                y1,
                x2,
                y2,
                size: self.model,
            });
        }
        let (sw, sh) = (self.screen.width, self.screen.height);
        let (mw, mh) = (self.model.width, self.model.height);
        // Edges map by proportion, outwards, so the screen rectangle covers all the model asked
        // for and is never empty.
        Ok(Rect {
            x1: edge_floor(x1 as u64, mw, sw),
            y1: edge_floor(y1 as u64, mh, sh),
            x2: edge_ceil(x2 as u64, mw, sw).max(edge_floor(x1 as u64, mw, sw) + 1),
            y2: edge_ceil(y2 as u64, mh, sh).max(edge_floor(y1 as u64, mh, sh) + 1),
        })
    }

    /// The model-space region `[x1, y1, x2, y2]` for the screen rectangle `r`: the inverse of
    /// [`Self::region_to_screen`] (exact whenever the model space is no larger than the
    /// screen), for writing actions back in the model's terms. Edges round inwards, undoing
    /// `region_to_screen`'s outward rounding; the result is never empty.
    pub fn region_to_model(&self, r: Rect) -> [u32; 4] {
        let (sw, sh) = (self.screen.width, self.screen.height);
        let (mw, mh) = (self.model.width.max(1), self.model.height.max(1));
        let x1 = edge_ceil(u64::from(r.x1.min(sw)), sw, mw).min(mw - 1);
        let y1 = edge_ceil(u64::from(r.y1.min(sh)), sh, mh).min(mh - 1);
        let x2 = edge_floor(u64::from(r.x2.min(sw)), sw, mw).clamp(x1 + 1, mw);
        let y2 = edge_floor(u64::from(r.y2.min(sh)), sh, mh).clamp(y1 + 1, mh);
        [x1, y1, x2, y2]
    }
}

/// `floor((v + 0.5) · to / from)`, clamped to `to - 1`: pixel `v` of a `from`-wide axis to the
/// pixel of a `to`-wide axis holding its centre. Integer maths, so identity maps are exact.
fn map_center(v: u64, from: u32, to: u32) -> u32 {
    let (from, to) = (u64::from(from.max(1)), u64::from(to.max(1)));
    let mapped = ((2 * v + 1) * to) / (2 * from);
    mapped.min(to - 1) as u32
}

/// `floor(v · to / from)`: an edge position, rounded down.
fn edge_floor(v: u64, from: u32, to: u32) -> u32 {
    let (from, to) = (u64::from(from.max(1)), u64::from(to));
    ((v * to) / from).min(to) as u32
}

/// `ceil(v · to / from)`: an edge position, rounded up.
fn edge_ceil(v: u64, from: u32, to: u32) -> u32 {
    let (from, to) = (u64::from(from.max(1)), u64::from(to));
    (v * to).div_ceil(from).min(to) as u32
}

/// Qwen3-VL's relative coordinates (each axis 0–1000, whatever the screen) to screen pixels:
/// `x_px = floor(x · W / 1000)`, with 1000 (the far edge) clamped to the last pixel. Fails for
/// values outside 0–1000 or not finite.
pub fn relative_1000_to_screen(x: f64, y: f64, screen: Size) -> Result<Point, CoordinateError> {
    let valid = |v: f64| v.is_finite() && (0.0..=1000.0).contains(&v);
    if !valid(x) || !valid(y) {
        return Err(CoordinateError::OutOfRelative { x, y, size: screen });
    }
    let map = |v: f64, len: u32| -> u32 {
        let px = (v * f64::from(len) / 1000.0).floor() as u32;
        px.min(len.saturating_sub(1))
    };
    Ok(Point {
        x: map(x, screen.width),
        y: map(y, screen.height),
    })
}

/// The Qwen3-VL relative coordinate (0–1000) nearest the centre of screen pixel `p`, for
/// writing actions back in Qwen's terms. Maps back to `p` whenever the screen is at most 1000
/// pixels along that axis, and to within a pixel otherwise.
pub fn screen_to_relative_1000(p: Point, screen: Size) -> (u32, u32) {
    let map = |v: u32, len: u32| -> u32 {
        let len = len.max(1);
        let r = ((f64::from(v.min(len - 1)) + 0.5) * 1000.0 / f64::from(len)).round();
        (r as u32).min(1000)
    };
    (map(p.x, screen.width), map(p.y, screen.height))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!("1280x800".parse(), Ok(Size::new(1280, 800)));
        assert_eq!(" 1920X1080 ".parse(), Ok(Size::new(1920, 1080)));
        assert_eq!(Size::new(1280, 800).to_string(), "1280x800");
        assert!("1280".parse::<Size>().is_err());
        assert!("0x800".parse::<Size>().is_err());
        assert!("axb".parse::<Size>().is_err());
    }

    #[test]
    fn modes_parse() {
        assert_eq!("xga".parse(), Ok(ScaleMode::Xga));
        assert_eq!("WXGA".parse(), Ok(ScaleMode::Wxga));
        assert_eq!("none".parse(), Ok(ScaleMode::None));
        assert_eq!("auto".parse(), Ok(ScaleMode::Auto));
        assert_eq!(
            "1366x768".parse(),
            Ok(ScaleMode::Exact(Size::new(1366, 768)))
        );
        let err = "huge".parse::<ScaleMode>().expect_err("not a mode");
        assert!(err.to_string().contains("\"xga\""), "{err}");
        assert_eq!(ScaleMode::default(), ScaleMode::Auto);
    }

    #[test]
    fn auto_limits() {
        let s = Scaling::new(Size::new(1920, 1080), ScaleMode::Auto);
        assert!(s.model.width.max(s.model.height) <= AUTO_MAX_LONG_EDGE);
        assert!(s.model.area() <= AUTO_MAX_AREA);
        // Aspect kept to within a pixel.
        let ratio = f64::from(s.model.width) / f64::from(s.model.height);
        assert!((ratio - 16.0 / 9.0).abs() < 0.01, "{:?}", s.model);
        assert!(s.model.area() > 1_100_000, "not shrunk more than needed");

        let s = Scaling::new(Size::new(1280, 800), ScaleMode::Auto);
        assert!(s.is_identity());
        // Long edge alone: a very wide, short screen.
        let s = Scaling::new(Size::new(3200, 200), ScaleMode::Auto);
        assert_eq!(s.model, Size::new(1568, 98));
        // Never enlarges.
        let s = Scaling::new(Size::new(640, 480), ScaleMode::Auto);
        assert!(s.is_identity());
        let s = Scaling::new(Size::new(3840, 2160), ScaleMode::Auto);
        assert!(s.model.area() <= AUTO_MAX_AREA && s.model.width <= AUTO_MAX_LONG_EDGE);
    }

    #[test]
    fn fixed_modes_keep_the_requested_size() {
        let s = Scaling::new(Size::new(1920, 1080), ScaleMode::Xga);
        assert_eq!(s.model, Size::new(1024, 768));
        let s = Scaling::new(Size::new(1920, 1080), ScaleMode::Wxga);
        assert_eq!(s.model, Size::new(1280, 800));
        let s = Scaling::new(Size::new(1920, 1080), ScaleMode::None);
        assert!(s.is_identity());
    }

    #[test]
    fn identity_maps_exactly() {
        let s = Scaling::identity(Size::new(1280, 800));
        assert_eq!(s.to_screen(0, 0), Ok(Point { x: 0, y: 0 }));
        assert_eq!(s.to_screen(1279, 799), Ok(Point { x: 1279, y: 799 }));
        assert_eq!(s.to_screen(640, 400), Ok(Point { x: 640, y: 400 }));
        assert_eq!(s.to_model(Point { x: 17, y: 33 }), (17, 33));
    }

    #[test]
    fn downscaled_round_trips() {
        let s = Scaling::new(Size::new(1920, 1080), ScaleMode::Wxga);
        for x in (0..1280).step_by(7) {
            for y in (0..800).step_by(13) {
                let p = s.to_screen(x, y).expect("in range");
                assert!(p.x < 1920 && p.y < 1080);
                assert_eq!(s.to_model(p), (x as u32, y as u32));
            }
        }
        assert_eq!(s.to_screen(1279, 799), Ok(Point { x: 1919, y: 1079 }));
        assert_eq!(s.to_screen(640, 400), Ok(Point { x: 960, y: 540 }));
        let s = Scaling::new(Size::new(2560, 1440), ScaleMode::Auto);
        for x in [0, 1, 100, s.model.width - 1] {
            let p = s.to_screen(i64::from(x), 0).expect("in range");
            assert_eq!(s.to_model(p).0, x);
        }
    }

    #[test]
    fn out_of_range_says_where_the_screen_is() {
        let s = Scaling::identity(Size::new(1280, 800));
        let err = s.to_screen(1500, 20).expect_err("off screen");
        assert_eq!(
            err.to_string(),
            "coordinate [1500, 20] is outside the screen: x must be 0–1279 and y 0–799 (the screen is 1280x800)"
        );
        assert!(s.to_screen(-1, 0).is_err());
        assert!(s.to_screen(1280, 0).is_err());
        assert!(s.to_screen(0, 800).is_err());
        // In a scaled space the message gives the model's size, not the screen's.
        let s = Scaling::new(Size::new(1920, 1080), ScaleMode::Xga);
        let err = s.to_screen(1024, 0).expect_err("off the model's screen");
        assert!(
            err.to_string().contains("(the screen is 1024x768)"),
            "{err}"
        );
    }

    #[test]
    fn regions() {
        let s = Scaling::new(Size::new(1920, 1080), ScaleMode::Wxga);
        assert_eq!(
            s.region_to_screen([0, 0, 1280, 800]),
            Ok(Rect {
                x1: 0,
                y1: 0,
                x2: 1920,
                y2: 1080
            })
        );
        assert_eq!(
            s.region_to_screen([100, 100, 200, 150]),
            Ok(Rect {
                x1: 150,
                y1: 135,
                x2: 300,
                y2: 203
            })
        );
        assert_eq!(
            s.region_to_model(Rect {
                x1: 150,
                y1: 135,
                x2: 300,
                y2: 203
            }),
            [100, 100, 200, 150]
        );
        assert!(s.region_to_screen([200, 0, 100, 10]).is_err());
        assert!(s.region_to_screen([0, 0, 0, 10]).is_err());
        let err = s.region_to_screen([0, 0, 1281, 10]).expect_err("too wide");
        assert!(err.to_string().contains("x2 ≤ 1280"), "{err}");
        assert!(err.to_string().contains("1280x800"), "{err}");
    }

    #[test]
    fn qwen_relative() {
        let screen = Size::new(1280, 800);
        assert_eq!(
            relative_1000_to_screen(500.0, 500.0, screen),
            Ok(Point { x: 640, y: 400 })
        );
        assert_eq!(
            relative_1000_to_screen(1000.0, 1000.0, screen),
            Ok(Point { x: 1279, y: 799 })
        );
        assert_eq!(
            relative_1000_to_screen(0.0, 0.0, screen),
            Ok(Point { x: 0, y: 0 })
        );
        let err = relative_1000_to_screen(1200.0, 20.0, screen).expect_err("off");
        assert!(err.to_string().contains("0–1000"), "{err}");
        assert!(err.to_string().contains("1280x800"), "{err}");
        assert!(relative_1000_to_screen(f64::NAN, 0.0, screen).is_err());
        assert!(relative_1000_to_screen(-1.0, 0.0, screen).is_err());
        // Back and forth lands on the same pixel where the axis is at most 1000 px.
        let small = Size::new(800, 600);
        for x in (0..800).step_by(3) {
            let (rx, ry) = screen_to_relative_1000(Point { x, y: x % 600 }, small);
            let p = relative_1000_to_screen(f64::from(rx), f64::from(ry), small).expect("valid");
            assert_eq!(p, Point { x, y: x % 600 });
        }
    }
}
