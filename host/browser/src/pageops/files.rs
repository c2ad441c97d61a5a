//! File inputs: which local files a call may hand the page, and setting them.

use super::*;

impl BrowserManager {
    /// Check files against the allowed roots: their canonical paths.
    pub fn allowed_files(&self, paths: &[String]) -> Result<Vec<PathBuf>, ToolError> {
        let o = &self.inner.options;
        let canon = |d: &PathBuf| d.canonicalize().ok();
        let roots: Vec<PathBuf> = o.file_roots.iter().filter_map(canon).collect();
        let private: Vec<PathBuf> =
            o.private_dirs.iter().chain(o.user_data_dir.iter()).filter_map(canon).collect();
        let downloads = o.downloads_dir.as_ref().and_then(canon);
        let temp = std::env::temp_dir().canonicalize().ok();
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut out = Vec::with_capacity(paths.len());
        for p in paths {
            let denied = |why: String| ToolError::permission_denied(why).with("path", p.as_str());
            let outside = || {
                let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
                denied(format!(
                    "{p:?} is outside the allowed roots ({}); the operator can add a dir with --allow-file-root",
                    if shown.is_empty() { "none".to_owned() } else { shown.join(", ") }
                ))
            };
            // The roots are checked before the file is looked at: whether a file
            // outside them exists is not told.
            let lexical = lexical_absolute(&cwd, Path::new(p));
            let lexically_in = roots.iter().any(|r| lexical.starts_with(r));
            let real = match lexical.canonicalize() {
                Ok(r) => r,
                Err(e) if lexically_in => {
                    return Err(ToolError::file_not_found(format!("cannot use {p:?}: {e}"))
                        .with("path", p.as_str()));
                }
                Err(_) => return Err(outside()),
            };
            // The closest root holding the file (after symlinks).
            let Some(root) =
                roots.iter().filter(|r| real.starts_with(r)).max_by_key(|r| r.components().count())
            else {
                return Err(outside());
            };
            let in_downloads = downloads.as_ref().is_some_and(|d| real.starts_with(d));
            let temp_profile = temp.as_ref().is_some_and(|t| {
                real.strip_prefix(t).ok().and_then(|r| r.components().next()).is_some_and(|c| {
                    c.as_os_str().to_string_lossy().starts_with(crate::TEMP_PROFILE_PREFIX)
                })
            });
            if temp_profile || (!in_downloads && private.iter().any(|d| real.starts_with(d))) {
                return Err(denied(format!(
                    "{p:?} is ochre's own data (its data dir or the browser's profile); it is never given to a page"
                )));
            }
            if let Some(why) = hidden_or_credential(root, &real) {
                return Err(denied(format!(
                    "{p:?} is {why}; such files are given to a page only from an --allow-file-root that names the dir they are in"
                )));
            }
            if !real.is_file() {
                return Err(ToolError::file_not_found(format!("{p:?} is not a regular file"))
                    .with("path", p.as_str()));
            }
            out.push(real);
        }
        Ok(out)
    }

    /// Give files to a file input (a ref or a CSS selector): the names of
    /// the files it holds then. A selector is resolved once (to the input's
    /// ref); the files go to that element.
    pub async fn set_files(
        &self,
        tab: Option<TabId>,
        target: &page_ops::FileInput,
        paths: &[String],
    ) -> Result<Vec<String>, ToolError> {
        use page_ops::{FileInput, FilesOf, from_output, to_args};
        self.guarded(tab, async {
            let files = self.allowed_files(paths)?;
            let (n, page) = self.page(tab).await?;
            // Checks the target (a file input, enabled) and gives a clear error if not.
            let args = to_args(target).map_err(ToolError::internal)?;
            let input = self.run_op(n, &page, FileInput::NAME, args, 10_000).await?;
            let input = from_output::<FileInput>(input).map_err(ToolError::internal)?;
            let one = to_args(&FileInput::of_ref(input.ref_id)).map_err(ToolError::internal)?;
            // In the input's own document: a cross-site frame has its own session.
            let (doc, object_id) = self.element(n, &page, one.clone(), 10_000).await?;
            if self.slot(self.slot_of_tab(n)).endpoint.is_some() {
                // A browser ochre attached to may run on another machine, where
                // these paths mean nothing: the bytes go through the page.
                let files = files_for_page(&files)?;
                let r = self
                    .doc_send(
                        &doc,
                        "Runtime.callFunctionOn",
                        json!({"functionDeclaration": PUT_FILES_FN, "objectId": object_id,
                               "arguments": [{"value": files}], "returnByValue": true}),
                    )
                    .await
                    .map_err(|e| cdp_error("cannot set the files", e.message))?;
                if let Some(x) = r.get("exceptionDetails") {
                    let why = x["exception"]["description"].as_str().unwrap_or("an exception");
                    return Err(cdp_error("cannot set the files", why));
                }
            } else {
                let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
                self.doc_send(
                    &doc,
                    "DOM.setFileInputFiles",
                    json!({"files": files, "objectId": object_id}),
                )
                .await
                .map_err(|e| cdp_error("cannot set the files", e.message))?;
            }
            let seen = self.run_op(n, &page, FilesOf::NAME, one, 10_000).await?;
            Ok(from_output::<FilesOf>(seen).map_err(ToolError::internal)?.files)
        })
        .await
    }
}

/// The most bytes `file_upload` sends through the page to a browser ochre
/// attached to (they travel base64-encoded in one CDP message).
const MAX_PAGE_UPLOAD: u64 = 50 << 20;

/// Makes `File`s of `files` (name, type, modified, base64 bytes) and gives them
/// to the input `this`, with the `input` and `change` events a user's choice
/// fires.
const PUT_FILES_FN: &str = "function (files) {
  const dt = new DataTransfer();
  for (const f of files) {
    const bin = atob(f.b64), bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    dt.items.add(new File([bytes], f.name, { type: f.type, lastModified: f.modified }));
  }
  this.files = dt.files;
  this.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return this.files.length;
}";

/// The files (already allowed) as `PUT_FILES_FN` takes them.
fn files_for_page(files: &[PathBuf]) -> Result<Vec<Value>, ToolError> {
    use base64::Engine as _;
    let metas: Vec<Option<std::fs::Metadata>> = files.iter().map(|f| f.metadata().ok()).collect();
    let total: u64 = metas.iter().flatten().map(std::fs::Metadata::len).sum();
    if total > MAX_PAGE_UPLOAD {
        return Err(ToolError::invalid_argument(
            "paths",
            format!(
                "the files are {total} bytes; a browser ochre attached to gets files through the page, at most {MAX_PAGE_UPLOAD} bytes in all"
            ),
        ));
    }
    files
        .iter()
        .zip(&metas)
        .map(|(f, meta)| {
            let bytes = std::fs::read(f).map_err(|e| {
                ToolError::file_not_found(format!("cannot read {}: {e}", f.display()))
            })?;
            let modified = meta
                .as_ref()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as u64);
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Ok(json!({
                "name": name,
                "type": ochre_protocol::mime::of(&name).unwrap_or(""),
                "modified": modified,
                "b64": base64::engine::general_purpose::STANDARD.encode(bytes),
            }))
        })
        .collect()
}

/// `path` made absolute against `cwd`, with `.` and `..` resolved by the
/// text alone (no symlinks followed, nothing looked up).
fn lexical_absolute(cwd: &Path, path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in cwd.join(path).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Names of files that hold credentials without a leading dot.
const CREDENTIAL_FILES: &[&str] =
    &["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"];

/// Why a file under `root` is not given to a page unless a root names where it
/// is: a dotfile or a file in a dot dir below the root (`.ssh`, `.aws`,
/// `.netrc`, `.env`, ...), or an SSH private key. A root that is itself in a dot
/// dir (`--allow-file-root ~/.ssh`) names it.
fn hidden_or_credential(root: &Path, real: &Path) -> Option<&'static str> {
    let dotted = |c: std::path::Component<'_>| c.as_os_str().to_string_lossy().starts_with('.');
    let rel = real.strip_prefix(root).ok()?;
    if rel.components().any(dotted) {
        return Some("a dotfile (or in a dot dir)");
    }
    let name = real.file_name()?.to_string_lossy();
    if CREDENTIAL_FILES.contains(&name.as_ref()) && !root.components().any(dotted) {
        return Some("an SSH private key");
    }
    None
}
