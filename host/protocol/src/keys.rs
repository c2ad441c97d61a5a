//! Keys by name: the one table of the names a caller may give a key (ochre's
//! own, `Enter`, and the other tools' spellings, xdotool's `Return` and
//! `Page_Down`), the name ochre writes it by, and what the browser is sent
//! for it. The host's trusted input and the `computer` tool's translation
//! both read it.

/// A key that types nothing, or Space: what it is called and sent as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedKey {
    /// The names it goes by, lower case (its own name among them).
    pub names: &'static [&'static str],
    /// Its name in a chord (`PageDown`).
    pub name: &'static str,
    /// The DOM `key` it sends (`" "` for Space).
    pub key: &'static str,
    /// The DOM `code`.
    pub code: &'static str,
    /// Its Windows virtual key code.
    pub vk: i64,
    /// The text it types, if any.
    pub text: Option<&'static str>,
}

/// A modifier key of a chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Modifier {
    /// The names it goes by, lower case.
    pub names: &'static [&'static str],
    /// Its name in a chord, and its DOM `key`.
    pub name: &'static str,
    /// The DOM `code` (the left one).
    pub code: &'static str,
    /// Its Windows virtual key code.
    pub vk: i64,
    /// Its bit in CDP's `modifiers`.
    pub bit: i64,
}

const fn key(
    names: &'static [&'static str],
    name: &'static str,
    vk: i64,
    text: Option<&'static str>,
) -> NamedKey {
    NamedKey { names, name, key: name, code: name, vk, text }
}

/// Every named key.
pub const NAMED_KEYS: &[NamedKey] = &[
    key(&["enter", "return", "kp_enter"], "Enter", 13, Some("\r")),
    key(&["tab"], "Tab", 9, None),
    key(&["escape", "esc"], "Escape", 27, None),
    key(&["backspace"], "Backspace", 8, None),
    key(&["delete", "del"], "Delete", 46, None),
    key(&["insert"], "Insert", 45, None),
    NamedKey { names: &["space"], name: "Space", key: " ", code: "Space", vk: 32, text: Some(" ") },
    key(&["arrowup", "up"], "ArrowUp", 38, None),
    key(&["arrowdown", "down"], "ArrowDown", 40, None),
    key(&["arrowleft", "left"], "ArrowLeft", 37, None),
    key(&["arrowright", "right"], "ArrowRight", 39, None),
    key(&["home"], "Home", 36, None),
    key(&["end"], "End", 35, None),
    key(&["pageup", "page_up", "prior"], "PageUp", 33, None),
    key(&["pagedown", "page_down", "next"], "PageDown", 34, None),
];

/// Every modifier, in CDP's bit order.
pub const MODIFIERS: &[Modifier] = &[
    Modifier { names: &["alt", "option"], name: "Alt", code: "AltLeft", vk: 18, bit: 1 },
    Modifier { names: &["control", "ctrl"], name: "Control", code: "ControlLeft", vk: 17, bit: 2 },
    Modifier {
        names: &["meta", "cmd", "command", "super", "win", "windows"],
        name: "Meta",
        code: "MetaLeft",
        vk: 91,
        bit: 4,
    },
    Modifier { names: &["shift"], name: "Shift", code: "ShiftLeft", vk: 16, bit: 8 },
];

/// What a caller is told a key may be.
pub const KEY_HELP: &str = "use a key name (Enter, Tab, Escape, Backspace, Delete, Space, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, Insert, F1-F12), one character, or a chord like Control+a or Shift+Tab";

/// The named key called `name` (any case, any of its names).
#[must_use]
pub fn named(name: &str) -> Option<&'static NamedKey> {
    let lower = name.to_ascii_lowercase();
    NAMED_KEYS.iter().find(|k| k.names.contains(&lower.as_str()))
}

/// The modifier called `name` (any case, any of its names).
#[must_use]
pub fn modifier(name: &str) -> Option<&'static Modifier> {
    let lower = name.to_ascii_lowercase();
    MODIFIERS.iter().find(|m| m.names.contains(&lower.as_str()))
}

/// The function key called `name` (`F1`-`F12`, any case): its number.
#[must_use]
pub fn function(name: &str) -> Option<i64> {
    let n = name.strip_prefix(['f', 'F'])?.parse::<i64>().ok()?;
    (1..=12).contains(&n).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_is_one_key_or_modifier() {
        let mut seen = std::collections::BTreeSet::new();
        let names =
            NAMED_KEYS.iter().flat_map(|k| k.names).chain(MODIFIERS.iter().flat_map(|m| m.names));
        for n in names {
            assert_eq!(*n, n.to_ascii_lowercase(), "{n}: names are lower case");
            assert!(seen.insert(*n), "{n} names two keys");
        }
        for k in NAMED_KEYS {
            assert!(k.names.contains(&k.name.to_ascii_lowercase().as_str()), "{}", k.name);
        }
    }

    #[test]
    fn keys_are_found_by_any_of_their_names() {
        assert_eq!(named("Page_Down").map(|k| k.name), Some("PageDown"));
        assert_eq!(named("RETURN").map(|k| k.key), Some("Enter"));
        assert_eq!(named("space").map(|k| k.key), Some(" "));
        assert_eq!(modifier("Win").map(|m| m.name), Some("Meta"));
        assert_eq!(function("f12"), Some(12));
        assert_eq!(function("F13"), None);
        assert_eq!(named("a"), None);
    }
}
