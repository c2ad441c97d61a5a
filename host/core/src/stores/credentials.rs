//! Origin-bound credentials: a username, a password and optionally a TOTP
//! seed, kept under a name and bound to the origins they belong to
//! (`ochre secret credential set NAME --origin https://app.example ...`).
//!
//! The host types them into a login form (`oc_credential_fill`) only on a
//! page whose origin, and whose field's frame's origin, is one of those; the
//! model names the credential and never sees a value. They are sealed with the
//! operator's key, as logins are ([`super::sealed`]); the summary in clear
//! holds the name, the origins and whether a TOTP seed is kept.
//!
//! Files: `<data-dir>/credentials/<name>.json` (mode 0600).

use serde::{Deserialize, Serialize};

use ochre_protocol::ToolError;

use super::sealed::{Kind, Sealed};

type Result<T> = std::result::Result<T, ToolError>;

/// What a credential is, without a value: what `list` and `show` tell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CredentialSummary {
    /// Its name.
    pub name: String,
    /// When it was saved (RFC 3339, UTC).
    pub saved_at: String,
    /// The origins it may be typed on (`https://app.example`, `http://127.0.0.1:8080`).
    pub origins: Vec<String>,
    /// A username is kept.
    pub username: bool,
    /// A TOTP seed is kept (one-time codes are made from it).
    pub totp: bool,
}

impl CredentialSummary {
    /// Whether it may be typed on a page of `origin` (as a browser serializes
    /// one: `location.origin`).
    pub fn allows(&self, origin: &str) -> bool {
        origin_of(origin).is_ok_and(|o| self.origins.contains(&o))
    }
}

/// The sealed part of a credential. `Debug` shows no value.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialSecret {
    /// The username (empty: none).
    #[serde(default)]
    pub username: String,
    /// The password.
    pub password: String,
    /// The TOTP seed (base32, or an `otpauth://totp/` URI).
    #[serde(default)]
    pub totp: Option<String>,
}

impl std::fmt::Debug for CredentialSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CredentialSecret(•••)")
    }
}

/// Origin-bound credentials: [`Sealed`] files of [`CredentialSecret`]s.
#[derive(Debug)]
pub struct Credential;

impl Kind for Credential {
    const DIR: &'static str = "credentials";
    const WHAT: &'static str = "credential";
    type Summary = CredentialSummary;
    type Secret = CredentialSecret;
    fn name_of(summary: &CredentialSummary) -> &str {
        &summary.name
    }
    fn not_found(name: &str) -> ToolError {
        ToolError::credential_not_found(format!(
            "no credential named {name:?} (the operator adds one with `ochre secret credential set {name} --origin URL`)"
        ))
        .with("credential", name)
    }
}

/// The credentials of a data dir.
pub type CredentialStore = Sealed<Credential>;

impl Sealed<Credential> {
    /// Save `secret` as credential `name`, bound to `origins` (URLs or
    /// origins; each is checked and kept as its origin); its summary.
    pub fn save(
        &self,
        name: &str,
        origins: &[String],
        secret: &CredentialSecret,
    ) -> Result<CredentialSummary> {
        Self::check_name(name)?;
        if origins.is_empty() {
            return Err(ToolError::invalid_argument(
                "origin",
                "a credential is bound to one origin at least (--origin https://app.example)",
            ));
        }
        let mut bound = Vec::new();
        for o in origins {
            let o = origin_of(o).map_err(|why| ToolError::invalid_argument("origin", why))?;
            if !bound.contains(&o) {
                bound.push(o);
            }
        }
        if secret.password.is_empty() {
            return Err(ToolError::invalid_argument("password", "the password is empty"));
        }
        if let Some(seed) = &secret.totp {
            ochre_protocol::totp::parse_secret(seed).map_err(|e| {
                ToolError::invalid_secret(format!("the TOTP seed is unusable: {}", e.0))
            })?;
        }
        let summary = CredentialSummary {
            name: name.to_owned(),
            saved_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            origins: bound,
            username: !secret.username.is_empty(),
            totp: secret.totp.is_some(),
        };
        self.seal(name, &summary, secret)?;
        Ok(summary)
    }
}

/// The origin of `text` (a URL or an origin) as a browser serializes it
/// (`https://app.example`, default port left out), for `http` and `https`
/// only; else why not.
pub fn origin_of(text: &str) -> std::result::Result<String, String> {
    let o = ochre_protocol::site::Origin::parse(text)?;
    if !matches!(o.scheme.as_str(), "http" | "https") {
        return Err(format!(
            "{text:?} is not an http(s) origin; an origin looks like https://app.example"
        ));
    }
    Ok(o.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::sealed::LoginKey;

    #[test]
    fn a_credential_is_sealed_bound_and_checked() {
        let data = std::env::temp_dir().join(format!("ochre-creds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data);
        let store = CredentialStore::new(&data, LoginKey::generate().ok());
        let secret = CredentialSecret {
            username: "alice".into(),
            password: "pw-s3cr3t-value".into(),
            totp: Some("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ".into()),
        };
        let origins = vec!["HTTP://App.Example:80/login?x=1".into(), "https://app.example".into()];
        let s = store.save("app", &origins, &secret).expect("saved");
        assert_eq!(s.origins, ["http://app.example", "https://app.example"]);
        assert!(s.username && s.totp);
        assert!(s.allows("http://app.example") && s.allows("https://app.example:443"));
        for other in ["http://app.example.evil.test", "http://app.example:8080", "null", ""] {
            assert!(!s.allows(other), "{other}");
        }
        let file = std::fs::read_to_string(data.join("credentials/app.json")).expect("the file");
        assert!(!file.contains("s3cr3t") && !file.contains("alice") && !file.contains("GEZD"));
        let (summary, opened) = store.open("app").expect("opened");
        assert_eq!((summary, opened), (s, secret.clone()));
        assert!(!format!("{secret:?}").contains("s3cr3t"));

        let e = store.save("bad", &["ftp://x".into()], &secret).expect_err("ftp");
        assert_eq!(e.details["field"], "origin");
        let e = store.save("bad", &[], &secret).expect_err("none");
        assert_eq!(e.details["field"], "origin");
        let bad_seed = CredentialSecret { totp: Some("not base32 !!".into()), ..secret };
        let e = store.save("bad", &origins, &bad_seed).expect_err("seed");
        assert!(!e.message.contains("not base32 !!"), "{e}");
        let e = store.open("nope").expect_err("missing");
        assert_eq!(e.code, ochre_protocol::Code::CredentialNotFound);
        let _ = std::fs::remove_dir_all(&data);
    }
}
