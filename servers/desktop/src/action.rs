//! The canonical action: what every action space (Anthropic, Qwen3-VL, OpenAI) is translated
//! into before it reaches a display. Coordinates here are always the screen's own pixels.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::keys::{Chord, Key};

/// A point on the screen, in the screen's own pixels (not the model's scaled space).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    /// Pixels from the left edge.
    pub x: u32,
    /// Pixels from the top edge.
    pub y: u32,
}

/// A rectangle on the screen, in the screen's own pixels; `x1 < x2`, `y1 < y2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rect {
    /// Left edge (inclusive).
    pub x1: u32,
    /// Top edge (inclusive).
    pub y1: u32,
    /// Right edge (exclusive).
    pub x2: u32,
    /// Bottom edge (exclusive).
    pub y2: u32,
}

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MouseButton {
    /// The primary button.
    Left,
    /// The secondary button.
    Right,
    /// The wheel button.
    Middle,
    /// The "back" side button (X button 8).
    Back,
    /// The "forward" side button (X button 9).
    Forward,
}

/// Which way a scroll goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScrollDirection {
    /// Content moves down (wheel up, X button 4).
    Up,
    /// Wheel down, X button 5.
    Down,
    /// Horizontal wheel left, X button 6.
    Left,
    /// Horizontal wheel right, X button 7.
    Right,
}

/// How an episode is asked to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminateStatus {
    /// The agent believes the task is done (the grader decides).
    Success,
    /// The agent gives up.
    Failure,
}

/// One action on a desktop, in screen pixels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Capture the screen.
    Screenshot,
    /// Report where the pointer is.
    CursorPosition,
    /// Report the screen's size.
    ScreenSize,
    /// Move the pointer.
    MouseMove {
        /// Where to.
        to: Point,
    },
    /// Click `count` times (1, 2 or 3) with `button`, at `at` (or where the pointer is), holding
    /// `modifiers` meanwhile. A triple click is one gesture (three presses within the
    /// double-click interval), not three separate clicks.
    Click {
        /// Where; `None` clicks where the pointer is.
        at: Option<Point>,
        /// Which button.
        button: MouseButton,
        /// 1, 2 or 3.
        count: u8,
        /// Keys held during the click (e.g. shift).
        modifiers: Vec<Key>,
    },
    /// Press the left button at the first point, move through the others, release at the last.
    /// Always at least two points.
    Drag {
        /// The path.
        path: Vec<Point>,
    },
    /// Press the left button where the pointer is, move to `to`, release there. Qwen3-VL's
    /// `left_click_drag` (and Anthropic's older one) names only the end point; the start is
    /// wherever the pointer already is, which only the display knows.
    DragFromPointer {
        /// Where to release.
        to: Point,
    },
    /// Press a button and keep it down (optionally after moving to `at`).
    MouseDown {
        /// Which button.
        button: MouseButton,
        /// Where to press; `None` presses where the pointer is.
        at: Option<Point>,
    },
    /// Release a button (optionally after moving to `at`).
    MouseUp {
        /// Which button.
        button: MouseButton,
        /// Where to release; `None` releases where the pointer is.
        at: Option<Point>,
    },
    /// Turn the wheel `amount` clicks in `direction`, at `at` (or where the pointer is), holding
    /// `modifiers` meanwhile.
    Scroll {
        /// Where; `None` scrolls where the pointer is.
        at: Option<Point>,
        /// Which way.
        direction: ScrollDirection,
        /// Wheel clicks, 1 or more.
        amount: u32,
        /// Keys held during the scroll.
        modifiers: Vec<Key>,
    },
    /// Type Unicode text.
    Type {
        /// The text.
        text: String,
    },
    /// Press chords one after another (`ctrl+s`, or `ctrl+a Delete` as two chords).
    Key {
        /// The chords, in order.
        chords: Vec<Chord>,
    },
    /// Hold a chord down for a while, then release it.
    HoldKey {
        /// The chord.
        chord: Chord,
        /// How long.
        duration: Duration,
    },
    /// Do nothing for a while (then look).
    Wait {
        /// How long.
        duration: Duration,
    },
    /// Look at a region of the screen at full resolution.
    Zoom {
        /// The region.
        region: Rect,
    },
    /// End the episode; the grader then checks the desktop.
    Terminate {
        /// What the agent claims (recorded, never paid for).
        status: TerminateStatus,
    },
    /// Give a text answer (Qwen3-VL's `answer`); recorded in the trajectory.
    Answer {
        /// The answer.
        text: String,
    },
}

/// The longest `wait` or `hold_key` accepted, as in Anthropic's reference (100 s).
pub const MAX_DURATION: Duration = Duration::from_secs(100);
