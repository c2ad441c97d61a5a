//! The MIME type of a file by its name's extension: what Chromium gives a file
//! a page is handed (`file_upload`), and what ochre serves its own files as
//! (evidence bundles and exports as MCP resources). One table for both.

/// The MIME type of a file named `name`, by its extension (case does not
/// matter); `None` for an extension not in the table.
///
/// ```
/// assert_eq!(ochre_protocol::mime::of("Report.CSV"), Some("text/csv"));
/// assert_eq!(ochre_protocol::mime::of("notes.md"), Some("text/markdown"));
/// assert_eq!(ochre_protocol::mime::of("a.unknown"), None);
/// assert_eq!(ochre_protocol::mime::of("no-extension"), None);
/// ```
pub fn of(name: &str) -> Option<&'static str> {
    let (_, ext) = name.rsplit_once('.')?;
    Some(match ext.to_ascii_lowercase().as_str() {
        "txt" => "text/plain",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "md" => "text/markdown",
        "json" => "application/json",
        "xml" => "text/xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        _ => return None,
    })
}
