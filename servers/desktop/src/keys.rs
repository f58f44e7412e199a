//! Key names (xdotool's X keysym names and common aliases) and chords.
//!
//! The models speak three dialects of key names: Anthropic's are xdotool's (`Return`, `ctrl+s`,
//! `alt+Tab`, `KP_0`), Qwen3-VL's are pyautogui's (`enter`, `ctrl`, `pagedown`), OpenAI's are
//! upper-case (`CTRL`, `ENTER`, `ARROWUP`). All of them end up here as X keysyms, with no
//! dependency on libX11: the table below holds the names that matter on a desktop, and any
//! other single character is mapped by the X rule for Unicode keysyms.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One key, as an X keysym.
///
/// Serializes as its name (`"Control_L"`, `"a"`, `"Return"`), so trajectories stay readable;
/// deserializes from any name [`parse_key`] accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// The X keysym.
    pub keysym: u32,
}

/// Modifiers held while one key is pressed (`ctrl+shift+t`).
///
/// Serializes as xdotool chord text made of canonical names (`"Control_L+Shift_L+t"`);
/// deserializes from any chord [`parse_chord`] accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord {
    /// Held first, released last.
    pub modifiers: Vec<Key>,
    /// Pressed and released while the modifiers are held.
    pub key: Key,
}

/// A key name (or chord) that could not be understood. The text is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// Nothing was given.
    #[error(
        "no key was given: name a key such as \"Return\", a chord such as \"ctrl+s\" or \"alt+Tab\", or a keypad key such as \"KP_0\""
    )]
    Empty,
    /// A name that is neither a keysym name, an alias nor a single character.
    #[error(
        "the key name \"{name}\" was not understood: use an X keysym name or a common alias, for example \"Return\", \"ctrl+s\", \"alt+Tab\", \"KP_0\", \"Page_Down\", \"F5\" or a single character such as \"a\""
    )]
    Unknown {
        /// The name as given.
        name: String,
    },
    /// A name that matches several keysyms once case is ignored (`AGRAVE`: `Agrave` or `agrave`).
    #[error(
        "the key name \"{name}\" is ambiguous when case is ignored (it could be {candidates}): write one of them exactly"
    )]
    Ambiguous {
        /// The name as given.
        name: String,
        /// The exact names it could mean, quoted and comma-separated.
        candidates: String,
    },
    /// A chord with an empty part (`ctrl++s`, `ctrl+`).
    #[error(
        "the chord \"{chord}\" has an empty key name between '+' signs: write chords like \"ctrl+s\" or \"ctrl+shift+t\""
    )]
    EmptyPart {
        /// The chord as given.
        chord: String,
    },
    /// Where only modifiers may be held (a click's or scroll's `text`), another key was named.
    #[error(
        "\"{name}\" is not a modifier key: only modifiers can be held during a click or scroll, for example \"shift\", \"ctrl\", \"alt\", \"super\" or \"ctrl+shift\""
    )]
    NotModifier {
        /// The name as given.
        name: String,
    },
}

/// Canonical X keysym names and values. Where X has two names for one keysym, the first listed
/// is the one [`Key::name`] gives (`Page_Up` before `Prior`).
const KEYSYMS: &[(&str, u32)] = &[
    // Latin-1 printable ASCII (the keysym is the code point).
    ("space", 0x20),
    ("exclam", 0x21),
    ("quotedbl", 0x22),
    ("numbersign", 0x23),
    ("dollar", 0x24),
    ("percent", 0x25),
    ("ampersand", 0x26),
    ("apostrophe", 0x27),
    ("quoteright", 0x27),
    ("parenleft", 0x28),
    ("parenright", 0x29),
    ("asterisk", 0x2a),
    ("plus", 0x2b),
    ("comma", 0x2c),
    ("minus", 0x2d),
    ("period", 0x2e),
    ("slash", 0x2f),
    ("colon", 0x3a),
    ("semicolon", 0x3b),
    ("less", 0x3c),
    ("equal", 0x3d),
    ("greater", 0x3e),
    ("question", 0x3f),
    ("at", 0x40),
    ("bracketleft", 0x5b),
    ("backslash", 0x5c),
    ("bracketright", 0x5d),
    ("asciicircum", 0x5e),
    ("underscore", 0x5f),
    ("grave", 0x60),
    ("quoteleft", 0x60),
    ("braceleft", 0x7b),
    ("bar", 0x7c),
    ("braceright", 0x7d),
    ("asciitilde", 0x7e),
    // Latin-1 supplement.
    ("nobreakspace", 0xa0),
    ("exclamdown", 0xa1),
    ("cent", 0xa2),
    ("sterling", 0xa3),
    ("currency", 0xa4),
    ("yen", 0xa5),
    ("brokenbar", 0xa6),
    ("section", 0xa7),
    ("diaeresis", 0xa8),
    ("copyright", 0xa9),
    ("ordfeminine", 0xaa),
    ("guillemotleft", 0xab),
    ("notsign", 0xac),
    ("hyphen", 0xad),
    ("registered", 0xae),
    ("macron", 0xaf),
    ("degree", 0xb0),
    ("plusminus", 0xb1),
    ("twosuperior", 0xb2),
    ("threesuperior", 0xb3),
    ("acute", 0xb4),
    ("mu", 0xb5),
    ("paragraph", 0xb6),
    ("periodcentered", 0xb7),
    ("cedilla", 0xb8),
    ("onesuperior", 0xb9),
    ("masculine", 0xba),
    ("guillemotright", 0xbb),
    ("onequarter", 0xbc),
    ("onehalf", 0xbd),
    ("threequarters", 0xbe),
    ("questiondown", 0xbf),
    ("Agrave", 0xc0),
    ("Aacute", 0xc1),
    ("Acircumflex", 0xc2),
    ("Atilde", 0xc3),
    ("Adiaeresis", 0xc4),
    ("Aring", 0xc5),
    ("AE", 0xc6),
    ("Ccedilla", 0xc7),
    ("Egrave", 0xc8),
    ("Eacute", 0xc9),
    ("Ecircumflex", 0xca),
    ("Ediaeresis", 0xcb),
    ("Igrave", 0xcc),
    ("Iacute", 0xcd),
    ("Icircumflex", 0xce),
    ("Idiaeresis", 0xcf),
    ("ETH", 0xd0),
    ("Ntilde", 0xd1),
    ("Ograve", 0xd2),
    ("Oacute", 0xd3),
    ("Ocircumflex", 0xd4),
    ("Otilde", 0xd5),
    ("Odiaeresis", 0xd6),
    ("multiply", 0xd7),
    ("Oslash", 0xd8),
    ("Ugrave", 0xd9),
    ("Uacute", 0xda),
    ("Ucircumflex", 0xdb),
    ("Udiaeresis", 0xdc),
    ("Yacute", 0xdd),
    ("THORN", 0xde),
    ("ssharp", 0xdf),
    ("agrave", 0xe0),
    ("aacute", 0xe1),
    ("acircumflex", 0xe2),
    ("atilde", 0xe3),
    ("adiaeresis", 0xe4),
    ("aring", 0xe5),
    ("ae", 0xe6),
    ("ccedilla", 0xe7),
    ("egrave", 0xe8),
    ("eacute", 0xe9),
    ("ecircumflex", 0xea),
    ("ediaeresis", 0xeb),
    ("igrave", 0xec),
    ("iacute", 0xed),
    ("icircumflex", 0xee),
    ("idiaeresis", 0xef),
    ("eth", 0xf0),
    ("ntilde", 0xf1),
    ("ograve", 0xf2),
    ("oacute", 0xf3),
    ("ocircumflex", 0xf4),
    ("otilde", 0xf5),
    ("odiaeresis", 0xf6),
    ("division", 0xf7),
    ("oslash", 0xf8),
    ("ugrave", 0xf9),
    ("uacute", 0xfa),
    ("ucircumflex", 0xfb),
    ("udiaeresis", 0xfc),
    ("yacute", 0xfd),
    ("thorn", 0xfe),
    ("ydiaeresis", 0xff),
    // TTY function keys.
    ("BackSpace", 0xff08),
    ("Tab", 0xff09),
    ("Linefeed", 0xff0a),
    ("Clear", 0xff0b),
    ("Return", 0xff0d),
    ("Pause", 0xff13),
    ("Scroll_Lock", 0xff14),
    ("Sys_Req", 0xff15),
    ("Escape", 0xff1b),
    ("Delete", 0xffff),
    ("Multi_key", 0xff20),
    ("ISO_Left_Tab", 0xfe20),
    ("ISO_Level3_Shift", 0xfe03),
    // Cursor control.
    ("Home", 0xff50),
    ("Left", 0xff51),
    ("Up", 0xff52),
    ("Right", 0xff53),
    ("Down", 0xff54),
    ("Page_Up", 0xff55),
    ("Prior", 0xff55),
    ("Page_Down", 0xff56),
    ("Next", 0xff56),
    ("End", 0xff57),
    ("Begin", 0xff58),
    // Misc functions.
    ("Select", 0xff60),
    ("Print", 0xff61),
    ("Execute", 0xff62),
    ("Insert", 0xff63),
    ("Undo", 0xff65),
    ("Redo", 0xff66),
    ("Menu", 0xff67),
    ("Find", 0xff68),
    ("Cancel", 0xff69),
    ("Help", 0xff6a),
    ("Break", 0xff6b),
    ("Mode_switch", 0xff7e),
    ("Num_Lock", 0xff7f),
    // Keypad.
    ("KP_Space", 0xff80),
    ("KP_Tab", 0xff89),
    ("KP_Enter", 0xff8d),
    ("KP_F1", 0xff91),
    ("KP_F2", 0xff92),
    ("KP_F3", 0xff93),
    ("KP_F4", 0xff94),
    ("KP_Home", 0xff95),
    ("KP_Left", 0xff96),
    ("KP_Up", 0xff97),
    ("KP_Right", 0xff98),
    ("KP_Down", 0xff99),
    ("KP_Page_Up", 0xff9a),
    ("KP_Prior", 0xff9a),
    ("KP_Page_Down", 0xff9b),
    ("KP_Next", 0xff9b),
    ("KP_End", 0xff9c),
    ("KP_Begin", 0xff9d),
    ("KP_Insert", 0xff9e),
    ("KP_Delete", 0xff9f),
    ("KP_Equal", 0xffbd),
    ("KP_Multiply", 0xffaa),
    ("KP_Add", 0xffab),
    ("KP_Separator", 0xffac),
    ("KP_Subtract", 0xffad),
    ("KP_Decimal", 0xffae),
    ("KP_Divide", 0xffaf),
    ("KP_0", 0xffb0),
    ("KP_1", 0xffb1),
    ("KP_2", 0xffb2),
    ("KP_3", 0xffb3),
    ("KP_4", 0xffb4),
    ("KP_5", 0xffb5),
    ("KP_6", 0xffb6),
    ("KP_7", 0xffb7),
    ("KP_8", 0xffb8),
    ("KP_9", 0xffb9),
    // Function keys: F1 is 0xffbe and the rest follow in order.
    ("F1", 0xffbe),
    ("F2", 0xffbf),
    ("F3", 0xffc0),
    ("F4", 0xffc1),
    ("F5", 0xffc2),
    ("F6", 0xffc3),
    ("F7", 0xffc4),
    ("F8", 0xffc5),
    ("F9", 0xffc6),
    ("F10", 0xffc7),
    ("F11", 0xffc8),
    ("F12", 0xffc9),
    ("F13", 0xffca),
    ("F14", 0xffcb),
    ("F15", 0xffcc),
    ("F16", 0xffcd),
    ("F17", 0xffce),
    ("F18", 0xffcf),
    ("F19", 0xffd0),
    ("F20", 0xffd1),
    ("F21", 0xffd2),
    ("F22", 0xffd3),
    ("F23", 0xffd4),
    ("F24", 0xffd5),
    // Modifiers.
    ("Shift_L", 0xffe1),
    ("Shift_R", 0xffe2),
    ("Control_L", 0xffe3),
    ("Control_R", 0xffe4),
    ("Caps_Lock", 0xffe5),
    ("Shift_Lock", 0xffe6),
    ("Meta_L", 0xffe7),
    ("Meta_R", 0xffe8),
    ("Alt_L", 0xffe9),
    ("Alt_R", 0xffea),
    ("Super_L", 0xffeb),
    ("Super_R", 0xffec),
    ("Hyper_L", 0xffed),
    ("Hyper_R", 0xffee),
    // XF86 media keys.
    ("XF86AudioLowerVolume", 0x1008_ff11),
    ("XF86AudioMute", 0x1008_ff12),
    ("XF86AudioRaiseVolume", 0x1008_ff13),
    ("XF86AudioPlay", 0x1008_ff14),
    ("XF86AudioStop", 0x1008_ff15),
    ("XF86AudioPrev", 0x1008_ff16),
    ("XF86AudioNext", 0x1008_ff17),
    ("XF86Back", 0x1008_ff26),
    ("XF86Forward", 0x1008_ff27),
    ("XF86AudioPause", 0x1008_ff31),
];

/// Lower-case aliases (xdotool users', pyautogui's, OpenAI's and browsers' names) and the
/// canonical keysym name each stands for. Looked up after exact keysym names, so `Meta_L` stays
/// Meta while `meta` means Super (what a model saying "meta"/"cmd" wants on Linux).
const ALIASES: &[(&str, &str)] = &[
    ("ctrl", "Control_L"),
    ("control", "Control_L"),
    ("lctrl", "Control_L"),
    ("ctrlleft", "Control_L"),
    ("rctrl", "Control_R"),
    ("ctrlright", "Control_R"),
    ("shift", "Shift_L"),
    ("lshift", "Shift_L"),
    ("shiftleft", "Shift_L"),
    ("rshift", "Shift_R"),
    ("shiftright", "Shift_R"),
    ("alt", "Alt_L"),
    ("option", "Alt_L"),
    ("lalt", "Alt_L"),
    ("altleft", "Alt_L"),
    ("optionleft", "Alt_L"),
    ("ralt", "Alt_R"),
    ("altright", "Alt_R"),
    ("optionright", "Alt_R"),
    ("altgr", "ISO_Level3_Shift"),
    ("super", "Super_L"),
    ("win", "Super_L"),
    ("windows", "Super_L"),
    ("cmd", "Super_L"),
    ("command", "Super_L"),
    ("meta", "Super_L"),
    ("winleft", "Super_L"),
    ("winright", "Super_R"),
    ("enter", "Return"),
    ("return", "Return"),
    ("esc", "Escape"),
    ("escape", "Escape"),
    ("del", "Delete"),
    ("delete", "Delete"),
    ("backspace", "BackSpace"),
    ("back_space", "BackSpace"),
    ("pgup", "Page_Up"),
    ("pageup", "Page_Up"),
    ("page_up", "Page_Up"),
    ("pgdn", "Page_Down"),
    ("pagedown", "Page_Down"),
    ("page_down", "Page_Down"),
    ("up", "Up"),
    ("down", "Down"),
    ("left", "Left"),
    ("right", "Right"),
    ("arrowup", "Up"),
    ("arrowdown", "Down"),
    ("arrowleft", "Left"),
    ("arrowright", "Right"),
    ("tab", "Tab"),
    ("space", "space"),
    ("spacebar", "space"),
    ("home", "Home"),
    ("end", "End"),
    ("insert", "Insert"),
    ("ins", "Insert"),
    ("capslock", "Caps_Lock"),
    ("caps_lock", "Caps_Lock"),
    ("numlock", "Num_Lock"),
    ("scrolllock", "Scroll_Lock"),
    ("printscreen", "Print"),
    ("prtsc", "Print"),
    ("prtscr", "Print"),
    ("prntscrn", "Print"),
    ("print", "Print"),
    ("pause", "Pause"),
    ("menu", "Menu"),
    ("apps", "Menu"),
    ("contextmenu", "Menu"),
    ("volumemute", "XF86AudioMute"),
    ("volumedown", "XF86AudioLowerVolume"),
    ("volumeup", "XF86AudioRaiseVolume"),
    ("playpause", "XF86AudioPlay"),
    ("nexttrack", "XF86AudioNext"),
    ("prevtrack", "XF86AudioPrev"),
    ("browserback", "XF86Back"),
    ("browserforward", "XF86Forward"),
];

/// Keysyms that may be held as modifiers during a click or scroll.
const MODIFIER_KEYSYMS: &[u32] = &[
    0xffe1, 0xffe2, // Shift
    0xffe3, 0xffe4, // Control
    0xffe7, 0xffe8, // Meta
    0xffe9, 0xffea, // Alt
    0xffeb, 0xffec, // Super
    0xffed, 0xffee, // Hyper
    0xfe03, // AltGr
];

/// Unicode keysyms are the code point with this bit set (X11 protocol, appendix A).
const UNICODE_KEYSYM_BASE: u32 = 0x0100_0000;

impl Key {
    /// The key with this keysym.
    pub const fn new(keysym: u32) -> Self {
        Self { keysym }
    }

    /// The key's name as xdotool understands it: the canonical keysym name when the table has
    /// one (`Return`, `Control_L`, `a`, `1`), otherwise the character itself (`€`), otherwise
    /// `U20AC`-style or `0x…` hex. Always accepted back by [`parse_key`].
    pub fn name(&self) -> String {
        let keysym = self.keysym;
        // Letters and digits are their own names; the table leaves them out.
        if let Some(c) = char::from_u32(keysym)
            && c.is_ascii_alphanumeric()
        {
            return c.to_string();
        }
        if let Some((name, _)) = KEYSYMS.iter().find(|(_, v)| *v == keysym) {
            return (*name).to_string();
        }
        if let Some(c) = self.to_char() {
            // Whitespace and control characters would not survive being written in a
            // space-separated key sequence, so they get the hex form.
            if c.is_whitespace() || c.is_control() {
                return format!("U{:04X}", u32::from(c));
            }
            return c.to_string();
        }
        format!("0x{keysym:x}")
    }

    /// The character this key types, for Latin-1 and Unicode keysyms (`None` for function keys).
    pub fn to_char(&self) -> Option<char> {
        match self.keysym {
            k @ (0x20..=0x7e | 0xa0..=0xff) => char::from_u32(k),
            k if k & 0xff00_0000 == UNICODE_KEYSYM_BASE => char::from_u32(k & 0x00ff_ffff),
            _ => None,
        }
    }

    /// The X keysym for typing `c`: Latin-1 code points are their own keysyms, every other
    /// character is `0x0100_0000 | code point`. A few control characters mean their keys
    /// (newline → Return, tab → Tab) since that is what a model writing them means.
    pub fn from_char(c: char) -> Self {
        let cp = u32::from(c);
        let keysym = match c {
            '\n' | '\r' => 0xff0d,
            '\t' => 0xff09,
            '\u{8}' => 0xff08,
            '\u{1b}' => 0xff1b,
            '\u{7f}' => 0xffff,
            _ if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) => cp,
            _ => UNICODE_KEYSYM_BASE | cp,
        };
        Self { keysym }
    }

    /// Whether this is a modifier key (Shift, Control, Alt, Meta, Super, Hyper, AltGr).
    pub fn is_modifier(&self) -> bool {
        MODIFIER_KEYSYMS.contains(&self.keysym)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        parse_key(&name).map_err(serde::de::Error::custom)
    }
}

impl Chord {
    /// A chord of one key with no modifiers.
    pub fn single(key: Key) -> Self {
        Self {
            modifiers: Vec::new(),
            key,
        }
    }

    /// xdotool chord text of canonical names: `Control_L+Shift_L+t`.
    pub fn name(&self) -> String {
        let mut parts: Vec<String> = self.modifiers.iter().map(Key::name).collect();
        parts.push(self.key.name());
        parts.join("+")
    }
}

impl fmt::Display for Chord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for Chord {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Chord {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_chord(&text).map_err(serde::de::Error::custom)
    }
}

/// The keysym of a canonical (case-sensitive) name from the table.
fn exact_keysym(name: &str) -> Option<u32> {
    KEYSYMS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// Parses one key name: a single character (its case kept: `a` vs `A`), an exact keysym name
/// (`Return`, `KP_0`), an alias (`ctrl`, `enter`, `pgdn`, case-insensitive), a keysym name in
/// another case when that is unambiguous (`return`, `KP_ENTER`), or hex (`U20AC`, `U+20AC`,
/// `0xff0d`).
pub fn parse_key(name: &str) -> Result<Key, KeyError> {
    if name.is_empty() {
        return Err(KeyError::Empty);
    }
    // A lone space is the space key; any other surrounding whitespace is noise.
    if name.trim().is_empty() {
        return Ok(Key::new(0x20));
    }
    let name = name.trim();
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Ok(Key::from_char(c));
    }
    if let Some(keysym) = exact_keysym(name) {
        return Ok(Key::new(keysym));
    }
    let lower = name.to_lowercase();
    if let Some((_, canonical)) = ALIASES.iter().find(|(alias, _)| *alias == lower)
        && let Some(keysym) = exact_keysym(canonical)
    {
        return Ok(Key::new(keysym));
    }
    // Case-insensitive match against the table, accepted only when every match is one key.
    let matches: Vec<(&str, u32)> = KEYSYMS
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .copied()
        .collect();
    if let Some(&(_, first)) = matches.first() {
        if matches.iter().all(|(_, v)| *v == first) {
            return Ok(Key::new(first));
        }
        let candidates = matches
            .iter()
            .map(|(n, _)| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(KeyError::Ambiguous {
            name: name.to_string(),
            candidates,
        });
    }
    if let Some(key) = parse_hex_key(name) {
        return Ok(key);
    }
    Err(KeyError::Unknown {
        name: name.to_string(),
    })
}

/// `U20AC` / `U+20AC` (a Unicode character, as XStringToKeysym reads it) or `0xff0d` (a raw
/// keysym, the form [`Key::name`] falls back to).
fn parse_hex_key(name: &str) -> Option<Key> {
    if let Some(hex) = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X")) {
        return u32::from_str_radix(hex, 16).ok().map(Key::new);
    }
    let hex = name
        .strip_prefix("U+")
        .or_else(|| name.strip_prefix("u+"))
        .or_else(|| name.strip_prefix('U'))?;
    if hex.is_empty() || hex.len() > 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
    Some(Key::from_char(c))
}

/// Parses one xdotool chord: keys joined by `+`, the last one pressed while the others are held
/// (`ctrl+s`, `ctrl+shift+t`, `alt+Tab`, `Return`, `KP_0`, `a`, `é`). A `+` key itself can be
/// written `plus`, or `+` at the end (`ctrl++`).
pub fn parse_chord(s: &str) -> Result<Chord, KeyError> {
    if s.is_empty() {
        return Err(KeyError::Empty);
    }
    // A chord of spaces is the space key, as `xdotool key " "` would be.
    if s.trim().is_empty() {
        return Ok(Chord::single(Key::new(0x20)));
    }
    let text = s.trim();
    if text == "+" {
        return Ok(Chord::single(Key::new(0x2b)));
    }
    // `ctrl++` ends in the plus key: take it off before splitting on '+'.
    let (head, trailing_plus) = match text.strip_suffix("++") {
        Some(head) => (head, true),
        None => (text, false),
    };
    let mut keys = Vec::new();
    for part in head.split('+') {
        if part.trim().is_empty() {
            return Err(KeyError::EmptyPart {
                chord: text.to_string(),
            });
        }
        keys.push(parse_key(part)?);
    }
    if trailing_plus {
        keys.push(Key::new(0x2b));
    }
    // `split` always yields at least one part, so `keys` is not empty here.
    let key = keys.pop().ok_or(KeyError::Empty)?;
    Ok(Chord {
        modifiers: keys,
        key,
    })
}

/// Parses what xdotool's `key` command takes: chords separated by whitespace, pressed one after
/// another (`ctrl+a BackSpace`). A text of only spaces is the space key. Spaces around a `+`
/// that joins two keys are forgiven (`ctrl + s` is `ctrl+s`): models write that, and xdotool
/// would otherwise press ctrl, then plus, then s.
pub fn parse_key_sequence(s: &str) -> Result<Vec<Chord>, KeyError> {
    if s.is_empty() {
        return Err(KeyError::Empty);
    }
    if s.trim().is_empty() {
        return Ok(vec![Chord::single(Key::new(0x20))]);
    }
    let tokens: Vec<&str> = s.split_whitespace().collect();
    let mut chords: Vec<String> = Vec::new();
    // Whether the previous token left a '+' waiting for the key it joins.
    let mut join_next = false;
    for (i, &token) in tokens.iter().enumerate() {
        let has_next = i + 1 < tokens.len();
        let lone_plus = token == "+";
        // `+s` after `ctrl`; a lone `+` between two keys; anything after a dangling `ctrl+`.
        // (`++` is the plus key after a '+', never a joint.)
        let join_prev = join_next
            || (lone_plus && has_next)
            || (token.len() > 1 && token.starts_with('+') && !token.starts_with("++"));
        let appended = match chords.last_mut() {
            Some(last) if join_prev => {
                last.push_str(token);
                true
            }
            _ => {
                chords.push(token.to_string());
                false
            }
        };
        join_next = has_next
            && ((lone_plus && appended)
                || (token.len() > 1 && token.ends_with('+') && !token.ends_with("++")));
    }
    chords.iter().map(|c| parse_chord(c)).collect()
}

/// Parses modifiers to hold during a click or scroll (`shift`, `ctrl+shift`); every key must be
/// a modifier. An empty (or all-blank) text means none.
pub fn parse_modifiers(s: &str) -> Result<Vec<Key>, KeyError> {
    if s.trim().is_empty() {
        return Ok(Vec::new());
    }
    let text = s.trim();
    let mut keys = Vec::new();
    // Accept both `ctrl+shift` and `ctrl shift`: models write either.
    for part in text.split(|c: char| c == '+' || c.is_whitespace()) {
        if part.is_empty() {
            continue;
        }
        let key = parse_key(part)?;
        if !key.is_modifier() {
            return Err(KeyError::NotModifier {
                name: part.to_string(),
            });
        }
        keys.push(key);
    }
    if keys.is_empty() {
        return Err(KeyError::EmptyPart {
            chord: text.to_string(),
        });
    }
    Ok(keys)
}

/// Normalises one OpenAI computer-use key name (`CTRL`, `ENTER`, `ARROWUP`, `PAGEDOWN`, `A`,
/// `F5`, `/`) to a key. Letters are lower-cased (`A` → `a`): OpenAI sends shift separately, and
/// an upper-case keysym would make xdotool add a shift of its own.
pub fn openai_key(name: &str) -> Result<Key, KeyError> {
    if name.is_empty() {
        return Err(KeyError::Empty);
    }
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Ok(Key::from_char(if c.is_alphabetic() {
            c.to_lowercase().next().unwrap_or(c)
        } else {
            c
        }));
    }
    // OpenAI's names are the aliases and keysym names in upper case; parse_key matches both
    // without regard to case.
    parse_key(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(keysym: u32) -> Key {
        Key::new(keysym)
    }

    #[test]
    fn single_keys_and_aliases() {
        assert_eq!(parse_key("Return"), Ok(k(0xff0d)));
        assert_eq!(parse_key("return"), Ok(k(0xff0d)));
        assert_eq!(parse_key("enter"), Ok(k(0xff0d)));
        assert_eq!(parse_key("KP_0"), Ok(k(0xffb0)));
        assert_eq!(parse_key("kp_enter"), Ok(k(0xff8d)));
        assert_eq!(parse_key("super"), Ok(k(0xffeb)));
        assert_eq!(parse_key("cmd"), Ok(k(0xffeb)));
        assert_eq!(parse_key("meta"), Ok(k(0xffeb)));
        assert_eq!(parse_key("Meta_L"), Ok(k(0xffe7)));
        assert_eq!(parse_key("Page_Up"), Ok(k(0xff55)));
        assert_eq!(parse_key("Prior"), Ok(k(0xff55)));
        assert_eq!(parse_key("pgdn"), Ok(k(0xff56)));
        assert_eq!(parse_key("F1"), Ok(k(0xffbe)));
        assert_eq!(parse_key("F24"), Ok(k(0xffd5)));
        assert_eq!(parse_key("f12"), Ok(k(0xffc9)));
        assert_eq!(parse_key("ISO_Left_Tab"), Ok(k(0xfe20)));
        assert_eq!(parse_key("Escape"), Ok(k(0xff1b)));
        assert_eq!(parse_key("esc"), Ok(k(0xff1b)));
        assert_eq!(parse_key("Delete"), Ok(k(0xffff)));
        assert_eq!(parse_key("capslock"), Ok(k(0xffe5)));
        assert_eq!(parse_key("space"), Ok(k(0x20)));
        assert_eq!(parse_key(" "), Ok(k(0x20)));
        assert_eq!(parse_key("minus"), Ok(k(0x2d)));
        assert_eq!(parse_key("bracketleft"), Ok(k(0x5b)));
        assert_eq!(parse_key("XF86AudioMute"), Ok(k(0x1008_ff12)));
    }

    #[test]
    fn single_characters_keep_case_and_follow_x_rules() {
        assert_eq!(parse_key("a"), Ok(k(0x61)));
        assert_eq!(parse_key("A"), Ok(k(0x41)));
        assert_eq!(parse_key("1"), Ok(k(0x31)));
        assert_eq!(parse_key("/"), Ok(k(0x2f)));
        assert_eq!(parse_key("é"), Ok(k(0xe9)));
        assert_eq!(parse_key("€"), Ok(k(0x0100_20ac)));
        assert_eq!(parse_key("U20AC"), Ok(k(0x0100_20ac)));
        assert_eq!(parse_key("U+00E9"), Ok(k(0xe9)));
        assert_eq!(parse_key("0xff0d"), Ok(k(0xff0d)));
        // "Up" is a key name, not U+P.
        assert_eq!(parse_key("Up"), Ok(k(0xff52)));
    }

    #[test]
    fn chords() {
        assert_eq!(
            parse_chord("ctrl+s"),
            Ok(Chord {
                modifiers: vec![k(0xffe3)],
                key: k(0x73)
            })
        );
        assert_eq!(
            parse_chord("alt+Tab"),
            Ok(Chord {
                modifiers: vec![k(0xffe9)],
                key: k(0xff09)
            })
        );
        assert_eq!(
            parse_chord("ctrl+shift+t"),
            Ok(Chord {
                modifiers: vec![k(0xffe3), k(0xffe1)],
                key: k(0x74)
            })
        );
        assert_eq!(
            parse_chord("ctrl++"),
            Ok(Chord {
                modifiers: vec![k(0xffe3)],
                key: k(0x2b)
            })
        );
        assert_eq!(parse_chord("super"), Ok(Chord::single(k(0xffeb))));
        assert_eq!(parse_chord("+"), Ok(Chord::single(k(0x2b))));
        assert!(matches!(
            parse_chord("ctrl+"),
            Err(KeyError::EmptyPart { .. })
        ));
    }

    #[test]
    fn sequences() {
        let seq = parse_key_sequence("ctrl+a BackSpace").expect("valid sequence");
        assert_eq!(seq.len(), 2);
        assert_eq!(seq[0].modifiers, vec![k(0xffe3)]);
        assert_eq!(seq[1], Chord::single(k(0xff08)));
        assert_eq!(parse_key_sequence(" "), Ok(vec![Chord::single(k(0x20))]));
        assert_eq!(
            parse_key_sequence("space"),
            Ok(vec![Chord::single(k(0x20))])
        );
        assert_eq!(parse_key_sequence(""), Err(KeyError::Empty));
        let ctrl_s = vec![parse_chord("ctrl+s").expect("valid")];
        assert_eq!(parse_key_sequence("ctrl + s").as_ref(), Ok(&ctrl_s));
        assert_eq!(parse_key_sequence("ctrl+ s").as_ref(), Ok(&ctrl_s));
        assert_eq!(parse_key_sequence("ctrl +s").as_ref(), Ok(&ctrl_s));
        assert_eq!(
            parse_key_sequence("ctrl++ Return"),
            Ok(vec![
                parse_chord("ctrl+plus").expect("valid"),
                Chord::single(k(0xff0d))
            ])
        );
        assert_eq!(parse_key_sequence("+"), Ok(vec![Chord::single(k(0x2b))]));
    }

    #[test]
    fn modifiers_only() {
        assert_eq!(parse_modifiers("shift"), Ok(vec![k(0xffe1)]));
        assert_eq!(
            parse_modifiers("ctrl+shift"),
            Ok(vec![k(0xffe3), k(0xffe1)])
        );
        assert_eq!(parse_modifiers(""), Ok(vec![]));
        let err = parse_modifiers("ctrl+a").expect_err("a is not a modifier");
        assert!(err.to_string().contains("\"a\" is not a modifier"), "{err}");
    }

    #[test]
    fn errors_are_sentences_with_examples() {
        let err = parse_chord("ctrl+Enterr").expect_err("typo");
        let text = err.to_string();
        assert!(text.contains("\"Enterr\""), "{text}");
        assert!(
            text.contains("\"Return\"") && text.contains("\"KP_0\""),
            "{text}"
        );
        assert!(parse_key("").is_err());
        let err = parse_key("AGRAVE").expect_err("ambiguous");
        assert!(err.to_string().contains("\"Agrave\""), "{err}");
    }

    #[test]
    fn names_round_trip() {
        for keysym in [
            0x61,
            0x41,
            0x31,
            0x2b,
            0x20,
            0xe9,
            0xff0d,
            0xff55,
            0xffb0,
            0xffe3,
            0x0100_20ac,
            0x0100_2003,
            0x1008_ff12,
            0x1234_5678,
        ] {
            let key = k(keysym);
            assert_eq!(parse_key(&key.name()), Ok(key), "{}", key.name());
        }
        assert_eq!(k(0xff55).name(), "Page_Up");
        let chord = parse_chord("ctrl+shift+plus").expect("valid");
        assert_eq!(chord.name(), "Control_L+Shift_L+plus");
        assert_eq!(parse_chord(&chord.name()), Ok(chord.clone()));
        let json = serde_json::to_string(&chord).expect("serializes");
        assert_eq!(json, "\"Control_L+Shift_L+plus\"");
        let back: Chord = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back, chord);
        let key: Key = serde_json::from_str("\"enter\"").expect("deserializes");
        assert_eq!(key, k(0xff0d));
    }

    #[test]
    fn openai_names() {
        assert_eq!(openai_key("CTRL"), Ok(k(0xffe3)));
        assert_eq!(openai_key("CONTROL"), Ok(k(0xffe3)));
        assert_eq!(openai_key("ENTER"), Ok(k(0xff0d)));
        assert_eq!(openai_key("RETURN"), Ok(k(0xff0d)));
        assert_eq!(openai_key("ESC"), Ok(k(0xff1b)));
        assert_eq!(openai_key("ESCAPE"), Ok(k(0xff1b)));
        assert_eq!(openai_key("SPACE"), Ok(k(0x20)));
        assert_eq!(openai_key("TAB"), Ok(k(0xff09)));
        assert_eq!(openai_key("BACKSPACE"), Ok(k(0xff08)));
        assert_eq!(openai_key("DELETE"), Ok(k(0xffff)));
        assert_eq!(openai_key("ALT"), Ok(k(0xffe9)));
        assert_eq!(openai_key("SHIFT"), Ok(k(0xffe1)));
        for name in ["CMD", "META", "SUPER", "WIN"] {
            assert_eq!(openai_key(name), Ok(k(0xffeb)), "{name}");
        }
        assert_eq!(openai_key("ARROWUP"), Ok(k(0xff52)));
        assert_eq!(openai_key("UP"), Ok(k(0xff52)));
        assert_eq!(openai_key("ARROWDOWN"), Ok(k(0xff54)));
        assert_eq!(openai_key("ARROWLEFT"), Ok(k(0xff51)));
        assert_eq!(openai_key("ARROWRIGHT"), Ok(k(0xff53)));
        assert_eq!(openai_key("PAGEUP"), Ok(k(0xff55)));
        assert_eq!(openai_key("PAGEDOWN"), Ok(k(0xff56)));
        assert_eq!(openai_key("HOME"), Ok(k(0xff50)));
        assert_eq!(openai_key("END"), Ok(k(0xff57)));
        assert_eq!(openai_key("F1"), Ok(k(0xffbe)));
        assert_eq!(openai_key("A"), Ok(k(0x61)));
        assert_eq!(openai_key("/"), Ok(k(0x2f)));
        assert!(openai_key("FOO").is_err());
    }
}
