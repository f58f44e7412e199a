//! Which X keycode, with or without Shift, types a keysym on the display's own keyboard map.
//!
//! enigo types any keysym that is not on a key's first level by binding it to a spare
//! keycode and pressing that. Applications that reread the keyboard map asynchronously
//! (Chromium, LibreOffice) sometimes translate the next key with the old map: under load,
//! "Copper" arrived as "opper", "+44" as "44" and "SUM(" as "sm(". So capitals and shifted
//! symbols are typed the way a person types them, Shift held on the key that carries them,
//! and only keysyms the map lacks (é, €, ✓ on a US map) are bound to spare keycodes, once
//! each, with a pause after binding for clients to reread the map.

use std::collections::VecDeque;

/// The keysym of the left Shift key.
const SHIFT_L: u32 = 0xffe1;

/// How a keysym is typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stroke {
    /// The key alone.
    Plain(u8),
    /// The key with Shift held.
    Shifted(u8),
    /// The map lacks the keysym: bind it to this spare keycode first.
    Bind(u8),
    /// The keysym is already bound to this spare keycode.
    Bound(u8),
}

impl Stroke {
    /// The keycode pressed.
    pub fn keycode(self) -> u8 {
        match self {
            Stroke::Plain(k) | Stroke::Shifted(k) | Stroke::Bind(k) | Stroke::Bound(k) => k,
        }
    }
}

/// The display's keyboard map as the core protocol reports it, and the spare keycodes
/// (those with no keysym) bound to keysyms the map lacks, least recently bound first.
#[derive(Debug, Clone)]
pub struct Keymap {
    min_keycode: u8,
    per_keycode: usize,
    keysyms: Vec<u32>,
    spare: VecDeque<u8>,
    bound: VecDeque<(u32, u8)>,
}

impl Keymap {
    /// A map from `GetKeyboardMapping`'s reply: `per_keycode` keysyms for each keycode from
    /// `min_keycode` on.
    pub fn new(min_keycode: u8, per_keycode: u8, keysyms: Vec<u32>) -> Self {
        let per_keycode = usize::from(per_keycode.max(1));
        let spare = keysyms
            .chunks(per_keycode)
            .zip(min_keycode..=u8::MAX)
            .filter(|(syms, _)| syms.iter().all(|&s| s == 0))
            .map(|(_, keycode)| keycode)
            .collect();
        Self {
            min_keycode,
            per_keycode,
            keysyms,
            spare,
            bound: VecDeque::new(),
        }
    }

    /// The first keycode carrying `keysym` at `level` (0 plain, 1 shifted).
    fn find(&self, keysym: u32, level: usize) -> Option<u8> {
        if level >= self.per_keycode {
            return None;
        }
        self.keysyms
            .chunks(self.per_keycode)
            .zip(self.min_keycode..=u8::MAX)
            .find(|(syms, _)| syms[level] == keysym)
            .map(|(_, keycode)| keycode)
    }

    /// The keycode of Shift, if the map has one.
    pub fn shift(&self) -> Option<u8> {
        self.find(SHIFT_L, 0)
    }

    /// How to type `keysym`. A keysym the map lacks takes a spare keycode (the least
    /// recently bound one when none is free, unless `held` holds it); `None` when every
    /// spare keycode is held down.
    pub fn stroke(&mut self, keysym: u32, held: &[u8]) -> Option<Stroke> {
        if let Some(keycode) = self.find(keysym, 0) {
            return Some(Stroke::Plain(keycode));
        }
        if self.shift().is_some()
            && let Some(keycode) = self.find(keysym, 1)
        {
            return Some(Stroke::Shifted(keycode));
        }
        if let Some(&(_, keycode)) = self.bound.iter().find(|(sym, _)| *sym == keysym) {
            return Some(Stroke::Bound(keycode));
        }
        let keycode = match self.spare.pop_front() {
            Some(keycode) => keycode,
            None => {
                let reuse = self.bound.iter().position(|(_, k)| !held.contains(k))?;
                self.bound.remove(reuse)?.1
            }
        };
        self.bound.push_back((keysym, keycode));
        Some(Stroke::Bind(keycode))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slice of a US map: keycode 10 is 1/!, 38 a/A, 50 Shift_L, 11–13 spare.
    fn us() -> Keymap {
        let mut keysyms = vec![0; 4 * (60 - 8)];
        let mut put = |keycode: usize, syms: [u32; 2]| {
            keysyms[(keycode - 8) * 4] = syms[0];
            keysyms[(keycode - 8) * 4 + 1] = syms[1];
        };
        put(10, [u32::from('1'), u32::from('!')]);
        put(38, [u32::from('a'), u32::from('A')]);
        put(50, [SHIFT_L, 0]);
        for keycode in (14..60).filter(|k| ![38, 50].contains(k)) {
            put(keycode, [0xfe00 + keycode as u32, 0]);
        }
        Keymap::new(8, 4, keysyms)
    }

    #[test]
    fn capitals_and_symbols_use_shift_on_their_own_key() {
        let mut map = us();
        assert_eq!(map.shift(), Some(50));
        assert_eq!(map.stroke(u32::from('a'), &[]), Some(Stroke::Plain(38)));
        assert_eq!(map.stroke(u32::from('A'), &[]), Some(Stroke::Shifted(38)));
        assert_eq!(map.stroke(u32::from('!'), &[]), Some(Stroke::Shifted(10)));
        assert_eq!(map.stroke(SHIFT_L, &[]), Some(Stroke::Plain(50)));
    }

    #[test]
    fn missing_keysyms_bind_spare_keycodes_once_then_reuse_the_oldest() {
        let mut map = us();
        let (e_acute, euro, check, snow) = (0xe9, 0x0100_20ac, 0x0100_2713, 0x0100_2603);
        // Keycodes 8 and 9 hold nothing (below the first key), nor do 11–13.
        assert_eq!(map.stroke(e_acute, &[]), Some(Stroke::Bind(8)));
        assert_eq!(map.stroke(e_acute, &[]), Some(Stroke::Bound(8)));
        assert_eq!(map.stroke(euro, &[]), Some(Stroke::Bind(9)));
        assert_eq!(map.stroke(check, &[]), Some(Stroke::Bind(11)));
        assert_eq!(map.stroke(0x0100_0100, &[]), Some(Stroke::Bind(12)));
        assert_eq!(map.stroke(0x0100_0101, &[]), Some(Stroke::Bind(13)));
        // Out of spares: the oldest binding not held down gives way.
        assert_eq!(map.stroke(snow, &[8]), Some(Stroke::Bind(9)));
        assert_eq!(map.stroke(e_acute, &[]), Some(Stroke::Bound(8)));
        assert_eq!(map.stroke(euro, &[8, 11, 12, 13, 9]), None);
    }

    #[test]
    fn a_map_without_shift_binds_capitals_instead() {
        let mut map = Keymap::new(8, 2, vec![u32::from('a'), u32::from('A'), 0, 0]);
        assert_eq!(map.shift(), None);
        assert_eq!(map.stroke(u32::from('A'), &[]), Some(Stroke::Bind(9)));
    }
}
