//! ochre's page library (`page.js`), installed once per document, and the
//! expressions that call it.

use serde_json::{Value, json};

/// The parts of the page library, in order (see `page/00-library.js`).
macro_rules! page_parts {
    ($($part:literal),* $(,)?) => {
        /// The page library's parts, by file name, in the order they are joined.
        pub const PAGE_PARTS: &[&str] = &[$($part),*];
        /// The page library: its parts joined.
        pub const PAGE_JS: &str = concat!($(include_str!(concat!("page/", $part))),*);
    };
}

page_parts!(
    "00-library.js",
    "01-text.js",
    "02-snapshot.js",
    "03-refs.js",
    "04-field.js",
    "05-find.js",
    "06-geometry.js",
    "07-actionable.js",
    "08-watch.js",
    "09-forms.js",
    "10-scroll.js",
    "11-dispatch.js",
);

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
    SCRIPT.get_or_init(|| page_library_under(page_library_key()))
}

/// The expression that installs the page library under the global `key` (if
/// nothing is there yet) and evaluates to it; [`page_library_key`] is the key
/// ochre uses. For benchmarks and tests that install it themselves.
pub fn page_library_under(key: &str) -> String {
    let next = ochre_protocol::scripts::NEXT_LINK;
    let codes: Vec<&str> = ochre_protocol::codes::ALL.iter().map(|(code, _)| *code).collect();
    format!("({PAGE_JS})({}, {next}, {})", json!(key), json!(codes))
}

/// Install the page library in a document (if it is not there yet) and run one
/// operation.
pub(super) fn page_install_and_call(ctx: &Value) -> String {
    format!("{}.run({ctx})", page_library())
}

#[cfg(test)]
mod tests {
    use super::{PAGE_JS, PAGE_PARTS, page_library_under};

    /// The page library's parts are every file of `page/`, each line at most
    /// 120 characters, and joined they make one expression that parses (Node's
    /// parser: Node.js is installed by `.ci/setup`, as the widget tests need).
    #[test]
    fn the_page_librarys_parts_are_all_joined_and_parse_as_one_function() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/page");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .expect("src/page")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(
            files, PAGE_PARTS,
            "every file of src/page is a part, in the order of its number"
        );
        for part in PAGE_PARTS {
            let text = std::fs::read_to_string(dir.join(part)).expect("part");
            for (n, line) in text.lines().enumerate() {
                let width = line.chars().count();
                assert!(width <= 120, "{part}:{}: {width} characters", n + 1);
            }
        }
        assert!(
            PAGE_JS.starts_with("// ochre's page library") && PAGE_JS.trim_end().ends_with("})")
        );
        let tmp =
            std::env::temp_dir().join(format!("ochre-page-library-{}.js", std::process::id()));
        std::fs::write(&tmp, format!("{};\n", page_library_under("__ochre_check"))).expect("write");
        let out = std::process::Command::new("node").arg("--check").arg(&tmp).output();
        let _ = std::fs::remove_file(&tmp);
        let out = out.expect("node (Node.js) runs: .ci/setup installs it");
        assert!(
            out.status.success(),
            "the joined page library does not parse: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
