//! Named logins: a browser session's storage state (its cookies, httpOnly ones
//! included, and its pages' `localStorage`, per origin) kept under a name, to
//! seed new isolated sessions already signed in.
//!
//! A login is sealed with the operator's key ([`super::sealed`]): no cookie
//! or storage value is ever written in clear. Beside the sealed state each
//! file keeps a summary in clear (its origins, its cookies' domains and names,
//! how many storage entries), which is what `list` and `show` tell.
//!
//! Files: `<data-dir>/logins/<name>.json` (mode 0600), each written atomically.

use serde_json::Value;

use ochre_protocol::ToolError;
use serde::{Deserialize, Serialize};

use super::sealed::{Kind, Sealed};
pub use super::sealed::{LoginKey, valid_name};

type Result<T> = std::result::Result<T, ToolError>;

pub use ochre_protocol::browser::{OriginStorage, StorageState};

/// What a login is, without a value: what `list` and `show` tell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoginSummary {
    /// Its name.
    pub name: String,
    /// When it was saved (RFC 3339, UTC).
    pub saved_at: String,
    /// The origins whose `localStorage` it holds.
    pub origins: Vec<String>,
    /// Its cookies, as `domain name` (never a value).
    pub cookies: Vec<String>,
    /// How many `localStorage` entries, over all origins.
    pub storage_entries: usize,
    /// Its IndexedDB databases, as `origin name (N records)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexed_db: Vec<String>,
    /// IndexedDB records not saved (they hold a Blob).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub indexed_db_skipped: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl LoginSummary {
    fn of(name: &str, state: &StorageState) -> Self {
        let text = |c: &Value, k: &str| c[k].as_str().unwrap_or_default().to_owned();
        let mut cookies: Vec<String> = state
            .cookies
            .iter()
            .map(|c| format!("{} {}", text(c, "domain"), text(c, "name")))
            .collect();
        cookies.sort();
        Self {
            name: name.to_owned(),
            saved_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            origins: state.origins.iter().map(|o| o.origin.clone()).collect(),
            cookies,
            storage_entries: state.origins.iter().map(|o| o.local_storage.len()).sum(),
            indexed_db: state
                .origins
                .iter()
                .flat_map(|o| {
                    o.databases()
                        .into_iter()
                        .map(|(name, n)| format!("{} {name} ({n} records)", o.origin))
                })
                .collect(),
            indexed_db_skipped: state.skipped,
        }
    }
}

/// Named logins: [`Sealed`] files of [`StorageState`]s.
#[derive(Debug)]
pub struct Login;

impl Kind for Login {
    const DIR: &'static str = "logins";
    const WHAT: &'static str = "login";
    type Summary = LoginSummary;
    type Secret = StorageState;
    fn name_of(summary: &LoginSummary) -> &str {
        &summary.name
    }
    fn not_found(name: &str) -> ToolError {
        ToolError::login_not_found(format!("no login named {name:?}"))
    }
}

/// The named logins of a data dir.
pub type LoginStore = Sealed<Login>;

impl Sealed<Login> {
    /// Save `state` as login `name` (replacing one of that name); its summary.
    pub fn save(&self, name: &str, state: &StorageState) -> Result<LoginSummary> {
        let summary = LoginSummary::of(name, state);
        self.seal(name, &summary, state)?;
        Ok(summary)
    }

    /// Login `name`'s storage state (unsealed with the key).
    pub fn load(&self, name: &str) -> Result<StorageState> {
        self.open(name).map(|(_, state)| state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> StorageState {
        StorageState {
            cookies: vec![
                json!({"name": "session", "value": "s3cr3t-cookie-value", "domain": "127.0.0.1", "httpOnly": true}),
            ],
            origins: vec![OriginStorage {
                origin: "http://127.0.0.1:5000".into(),
                local_storage: vec![("token".into(), "s3cr3t-storage-value".into())],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("ochre-logins-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_login_is_sealed_and_only_its_key_opens_it() {
        let data = dir("seal");
        let key = LoginKey::generate().expect("a key");
        let store = LoginStore::new(&data, Some(key.clone()));
        let summary = store.save("admin", &state()).expect("saved");
        assert_eq!(summary.cookies, ["127.0.0.1 session"]);
        assert_eq!((summary.origins.len(), summary.storage_entries), (1, 1));
        let file = std::fs::read_to_string(data.join("logins/admin.json")).expect("the file");
        assert!(!file.contains("s3cr3t"), "a value in clear: {file}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(data.join("logins/admin.json"))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(store.load("admin").expect("opened"), state());
        // The same key read back from its text opens it too.
        let again = LoginStore::new(&data, Some(LoginKey::parse(&key.encoded()).expect("parsed")));
        assert_eq!(again.load("admin").expect("opened"), state());

        // Without the key: listed and shown, never opened; another key fails.
        let keyless = LoginStore::new(&data, None);
        assert_eq!(keyless.list().expect("list")[0].name, "admin");
        assert_eq!(keyless.show("admin").expect("show").cookies, ["127.0.0.1 session"]);
        let e = keyless.load("admin").expect_err("no key");
        assert!(
            e.code == ochre_protocol::Code::LoginLocked && e.message.contains("no login key"),
            "{e}"
        );
        let other = LoginStore::new(&data, Some(LoginKey::generate().expect("a key")));
        let e = other.load("admin").expect_err("another key");
        assert!(
            e.code == ochre_protocol::Code::LoginLocked && e.message.contains("another key"),
            "{e}"
        );

        // A changed summary (or a file moved to another name) does not open.
        let path = data.join("logins/admin.json");
        let changed = file.replace("127.0.0.1 session", "127.0.0.1 other");
        std::fs::write(&path, changed).expect("written");
        assert!(store.load("admin").is_err());
        std::fs::write(&path, &file).expect("written");
        std::fs::copy(&path, data.join("logins/copy.json")).expect("copied");
        assert!(store.load("copy").is_err(), "a login opened under another name");

        assert!(store.delete("admin").expect("deleted"));
        assert!(!store.delete("admin").expect("gone"));
        assert_eq!(
            store.load("admin").expect_err("gone").code,
            ochre_protocol::Code::LoginNotFound
        );
        let _ = std::fs::remove_dir_all(&data);
    }

    #[test]
    fn names_and_keys_are_checked() {
        for good in ["admin", "a.b-c_d", "x"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", ".hidden", "a/b", "../x", "a b", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
        let store = LoginStore::new(&dir("names"), LoginKey::generate().ok());
        let e = store.save("../escape", &state()).expect_err("refused");
        assert_eq!(e.details["field"], "name");
        assert!(LoginKey::parse("short").is_err());
        let hex = "ab".repeat(32);
        assert!(LoginKey::parse(&hex).is_ok());
        let e = LoginKey::parse("not a key at all").expect_err("refused");
        assert!(!e.contains("not a key at all"), "the error quotes the text: {e}");
    }
}
