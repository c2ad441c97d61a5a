//! ochre's page library (`page.js`), installed once per document, and the
//! expressions that call it.

use serde_json::{Value, json};

const PAGE_JS: &str = include_str!("page.js");

/// What the short form of a page operation answers in a document the page
/// library is not installed in yet.
pub(super) const NOT_INSTALLED: &str = "\u{1}ochre: page library not installed";

/// The page library's global name in this run's documents: random per process,
/// so a page cannot count on it (`window[key]` is non-enumerable and read-only).
pub fn page_library_key() -> &'static str {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        let mut bytes = [0u8; 8];
        // No randomness (never seen on Linux): a fixed name still works.
        let _ = getrandom::fill(&mut bytes);
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("__ochre_{hex}")
    })
}

/// One page operation in a document where the library is installed: a few
/// hundred bytes (answers [`NOT_INSTALLED`] where it is not).
pub(super) fn page_call(ctx: &Value) -> String {
    let key = json!(page_library_key());
    format!("window[{key}] ? window[{key}].run({ctx}) : {}", json!(NOT_INSTALLED))
}

/// The page library of a document, installed if it is not there yet: the whole
/// library (about 100 KB), given its key, the "next" link rule and the error
/// codes of the registry (`fail` refuses any other).
pub(super) fn page_library() -> &'static str {
    static SCRIPT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SCRIPT.get_or_init(|| {
        let next = ochre_protocol::scripts::NEXT_LINK;
        let codes: Vec<&str> = ochre_protocol::codes::ALL.iter().map(|(code, _)| *code).collect();
        format!("({PAGE_JS})({}, {next}, {})", json!(page_library_key()), json!(codes))
    })
}

/// Install the page library in a document (if it is not there yet) and run one
/// operation.
pub(super) fn page_install_and_call(ctx: &Value) -> String {
    format!("{}.run({ctx})", page_library())
}
