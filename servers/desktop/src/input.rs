//! How a canonical [`Action`] becomes low-level input events for a worker.

use std::time::Duration;

use crate::action::{Action, MouseButton, Point, ScrollDirection};
use crate::keys::{Chord, Key};
use crate::worker::{InputStep, Press};

/// Characters per `Text` event: long text goes in chunks, as Anthropic's reference types it,
/// so one event never holds the worker for long.
const TYPE_CHUNK: usize = 50;

/// The pause before a character typed right after the same character. Toolkits that filter
/// X key auto-repeat (LibreOffice's X11 back end among them) take a release and a press of
/// one key in quick succession for auto-repeat and drop the second: "apples" arrived as
/// "aples", "888" as "8".
const REPEAT_GAP_MS: u64 = 60;

/// The input events that perform `action`, or `None` for actions that are not input
/// (screenshots, waits, zoom, terminate, answers, queries).
pub fn plan(action: &Action) -> Option<Vec<InputStep>> {
    let mut steps = Vec::new();
    match action {
        Action::MouseMove { to } => move_to(&mut steps, *to),
        Action::Click {
            at,
            button,
            count,
            modifiers,
        } => {
            if let Some(at) = at {
                move_to(&mut steps, *at);
            }
            press_keys(&mut steps, modifiers);
            // Presses back to back: one gesture within the double-click interval, which is
            // what makes a triple click select a line.
            for _ in 0..(*count).max(1) {
                steps.push(InputStep::Button {
                    button: *button,
                    press: Press::Click,
                });
            }
            release_keys(&mut steps, modifiers);
        }
        Action::Drag { path } => {
            let (first, rest) = path.split_first()?;
            move_to(&mut steps, *first);
            steps.push(InputStep::Button {
                button: MouseButton::Left,
                press: Press::Press,
            });
            let mut previous = *first;
            for point in rest {
                // A halfway point first: toolkits start a drag only after the pointer moved
                // past a threshold while the button is down.
                steps.push(InputStep::Sleep { ms: 20 });
                move_to(&mut steps, midpoint(previous, *point));
                steps.push(InputStep::Sleep { ms: 20 });
                move_to(&mut steps, *point);
                previous = *point;
            }
            steps.push(InputStep::Sleep { ms: 20 });
            steps.push(InputStep::Button {
                button: MouseButton::Left,
                press: Press::Release,
            });
        }
        Action::DragFromPointer { to } => {
            steps.push(InputStep::Button {
                button: MouseButton::Left,
                press: Press::Press,
            });
            steps.push(InputStep::Sleep { ms: 20 });
            move_to(&mut steps, *to);
            steps.push(InputStep::Sleep { ms: 20 });
            steps.push(InputStep::Button {
                button: MouseButton::Left,
                press: Press::Release,
            });
        }
        Action::MouseDown { button, at } | Action::MouseUp { button, at } => {
            if let Some(at) = at {
                move_to(&mut steps, *at);
            }
            let press = if matches!(action, Action::MouseDown { .. }) {
                Press::Press
            } else {
                Press::Release
            };
            steps.push(InputStep::Button {
                button: *button,
                press,
            });
        }
        Action::Scroll {
            at,
            direction,
            amount,
            modifiers,
        } => {
            if let Some(at) = at {
                move_to(&mut steps, *at);
            }
            press_keys(&mut steps, modifiers);
            let clicks = i32::try_from(*amount).unwrap_or(i32::MAX);
            let (clicks, horizontal) = match direction {
                ScrollDirection::Down => (clicks, false),
                ScrollDirection::Up => (-clicks, false),
                ScrollDirection::Right => (clicks, true),
                ScrollDirection::Left => (-clicks, true),
            };
            steps.push(InputStep::Scroll { clicks, horizontal });
            release_keys(&mut steps, modifiers);
        }
        Action::Type { text } => {
            let mut chunk = String::new();
            let (mut in_chunk, mut previous) = (0, None);
            for c in text.chars() {
                let repeated = previous == Some(c);
                if (repeated || in_chunk == TYPE_CHUNK) && !chunk.is_empty() {
                    steps.push(InputStep::Text {
                        text: std::mem::take(&mut chunk),
                    });
                    in_chunk = 0;
                }
                if repeated {
                    steps.push(InputStep::Sleep { ms: REPEAT_GAP_MS });
                }
                chunk.push(c);
                in_chunk += 1;
                previous = Some(c);
            }
            if !chunk.is_empty() {
                steps.push(InputStep::Text { text: chunk });
            }
        }
        Action::Key { chords } => {
            for chord in chords {
                press_chord(&mut steps, chord, None);
            }
        }
        Action::HoldKey { chord, duration } => press_chord(&mut steps, chord, Some(*duration)),
        Action::Screenshot
        | Action::CursorPosition
        | Action::ScreenSize
        | Action::Wait { .. }
        | Action::Zoom { .. }
        | Action::Terminate { .. }
        | Action::Answer { .. } => return None,
    }
    Some(steps)
}

fn move_to(steps: &mut Vec<InputStep>, point: Point) {
    steps.push(InputStep::MoveTo {
        x: point.x,
        y: point.y,
    });
}

fn midpoint(a: Point, b: Point) -> Point {
    Point {
        x: (a.x + b.x) / 2,
        y: (a.y + b.y) / 2,
    }
}

fn press_keys(steps: &mut Vec<InputStep>, keys: &[Key]) {
    for key in keys {
        steps.push(InputStep::Key {
            keysym: key.keysym,
            press: Press::Press,
        });
    }
}

fn release_keys(steps: &mut Vec<InputStep>, keys: &[Key]) {
    for key in keys.iter().rev() {
        steps.push(InputStep::Key {
            keysym: key.keysym,
            press: Press::Release,
        });
    }
}

/// Modifiers down, the key (clicked, or held for `hold`), modifiers up in reverse order.
fn press_chord(steps: &mut Vec<InputStep>, chord: &Chord, hold: Option<Duration>) {
    press_keys(steps, &chord.modifiers);
    match hold {
        None => steps.push(InputStep::Key {
            keysym: chord.key.keysym,
            press: Press::Click,
        }),
        Some(duration) => {
            steps.push(InputStep::Key {
                keysym: chord.key.keysym,
                press: Press::Press,
            });
            steps.push(InputStep::Sleep {
                ms: duration.as_millis() as u64,
            });
            steps.push(InputStep::Key {
                keysym: chord.key.keysym,
                press: Press::Release,
            });
        }
    }
    release_keys(steps, &chord.modifiers);
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTRL: Key = Key { keysym: 0xffe3 };
    const S: Key = Key { keysym: 0x73 };

    #[test]
    fn a_triple_click_is_three_presses_in_one_gesture() {
        let steps = plan(&Action::Click {
            at: Some(Point { x: 5, y: 6 }),
            button: MouseButton::Left,
            count: 3,
            modifiers: vec![],
        })
        .unwrap();
        assert_eq!(steps[0], InputStep::MoveTo { x: 5, y: 6 });
        assert_eq!(steps.len(), 4);
        assert!(steps[1..].iter().all(|s| matches!(
            s,
            InputStep::Button {
                press: Press::Click,
                ..
            }
        )));
    }

    #[test]
    fn chords_release_in_reverse_and_holds_wait() {
        let chord = Chord {
            modifiers: vec![CTRL],
            key: S,
        };
        let steps = plan(&Action::HoldKey {
            chord,
            duration: Duration::from_millis(1500),
        })
        .unwrap();
        assert_eq!(
            steps,
            vec![
                InputStep::Key {
                    keysym: 0xffe3,
                    press: Press::Press
                },
                InputStep::Key {
                    keysym: 0x73,
                    press: Press::Press
                },
                InputStep::Sleep { ms: 1500 },
                InputStep::Key {
                    keysym: 0x73,
                    press: Press::Release
                },
                InputStep::Key {
                    keysym: 0xffe3,
                    press: Press::Release
                },
            ]
        );
    }

    #[test]
    fn scrolls_and_drags() {
        let steps = plan(&Action::Scroll {
            at: None,
            direction: ScrollDirection::Up,
            amount: 3,
            modifiers: vec![],
        })
        .unwrap();
        assert_eq!(
            steps,
            vec![InputStep::Scroll {
                clicks: -3,
                horizontal: false
            }]
        );
        let steps = plan(&Action::Drag {
            path: vec![Point { x: 0, y: 0 }, Point { x: 100, y: 50 }],
        })
        .unwrap();
        assert_eq!(steps.first(), Some(&InputStep::MoveTo { x: 0, y: 0 }));
        assert!(steps.contains(&InputStep::MoveTo { x: 50, y: 25 }));
        assert_eq!(
            steps.last(),
            Some(&InputStep::Button {
                button: MouseButton::Left,
                press: Press::Release
            })
        );
    }

    #[test]
    fn long_text_is_typed_in_chunks() {
        let text = "éa".repeat(60);
        let steps = plan(&Action::Type { text: text.clone() }).unwrap();
        assert_eq!(steps.len(), 3);
        let typed: String = steps
            .iter()
            .map(|s| match s {
                InputStep::Text { text } => text.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(typed, text);
        assert!(plan(&Action::Screenshot).is_none());
    }

    #[test]
    fn a_repeated_character_waits_before_it_is_typed() {
        let steps = plan(&Action::Type {
            text: "apples 888".into(),
        })
        .unwrap();
        assert_eq!(
            steps,
            [
                InputStep::Text { text: "ap".into() },
                InputStep::Sleep { ms: REPEAT_GAP_MS },
                InputStep::Text {
                    text: "ples 8".into()
                },
                InputStep::Sleep { ms: REPEAT_GAP_MS },
                InputStep::Text { text: "8".into() },
                InputStep::Sleep { ms: REPEAT_GAP_MS },
                InputStep::Text { text: "8".into() },
            ]
        );
    }
}
