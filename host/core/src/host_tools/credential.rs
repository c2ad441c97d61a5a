//! `oc_credential_fill`: the host types a stored credential (its username,
//! password and a one-time code from its TOTP seed) into a login form, only
//! where the credential belongs: the page's origin and the origin of the
//! document holding each field must both be among the origins it is bound to.
//! The model names the credential and never sees a value: the password and
//! the code become known secrets (masked in every answer, journal entry,
//! trace and recording), and the answer shows no value.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::browser::BrowserManager;
use crate::browser::page_ops::{
    Fill, LoginField, LoginFields, LoginRole, NetworkIdle, Ping, Wait, WaitKind,
};
use crate::browser::{HostBrowser, TabId};
use crate::error::ToolError;
use crate::redact::KnownSecrets;
use crate::redact::MASK;
use crate::stores::credentials::{CredentialSecret, CredentialStore, CredentialSummary, origin_of};
use crate::tool::{Content, ToolOutput};

/// How long a one-time code typed stays known (past its use, masking its
/// digits would mask any number that equals them).
const CODE_TTL: std::time::Duration = std::time::Duration::from_secs(180);

/// `oc_credential_fill`'s arguments: the credential by name, and the
/// login form's fields by ref where the page's form is not found.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CredentialArgs {
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$"))]
    name: String,
    #[schemars(regex(pattern = r"^ax_\d+$"))]
    username: Option<String>,
    #[schemars(regex(pattern = r"^ax_\d+$"))]
    password: Option<String>,
    #[schemars(regex(pattern = r"^ax_\d+$"))]
    otp: Option<String>,
    submit: Option<bool>,
    #[serde(rename = "tabId")]
    tab_id: Option<String>,
}

impl CredentialArgs {
    /// The fields given by ref: each ref with its role.
    fn refs(&self) -> BTreeMap<String, LoginRole> {
        let given = [&self.username, &self.password, &self.otp];
        let roles = LoginRole::ALL.iter().copied().zip(given);
        roles.filter_map(|(role, r)| Some((r.clone()?, role))).collect()
    }
}

pub(super) fn add(made: &mut super::Made) {
    let offer = super::Offer {
        tier: 2,
        scope: crate::intent::Scope::Browser,
        annotations: crate::tool::Annotations::default(),
        control: false,
        always: false,
    };
    made.add(
        "oc_credential_fill",
        "Sign in with a stored credential by name: the host types its username, password \
         and one-time code into this page's login form (found, or by ref) on its own origins \
         only; values are never shown.",
        offer,
        |host, args: CredentialArgs, options| async move {
            run(&host.credentials, &host.browser, &host.known, &host.people, &options, &args).await
        },
    );
}

/// Run `oc_credential_fill`.
async fn run(
    credentials: &CredentialStore,
    browser: &BrowserManager,
    known: &KnownSecrets,
    people: &crate::people::People,
    options: &crate::tool::CallOptions,
    args: &CredentialArgs,
) -> Result<ToolOutput, ToolError> {
    let name = args.name.as_str();
    CredentialStore::check_name(name)?;
    let tab = TabId::named(args.tab_id.as_deref())?;
    let submit = args.submit == Some(true);
    let refs = args.refs();
    let (summary, secret) = match credentials.open(name) {
        // Not stored (a server without a login key has none it can open).
        Err(e)
            if e.code == crate::error::Code::CredentialNotFound
                || (e.code == crate::error::Code::LoginLocked
                    && credentials.show(name).is_err()) =>
        {
            // None stored: a client that can send its user to ochre's page
            // asks them there, for this page's origin, this once.
            let Some(asker) = &options.url_asker else { return Err(e) };
            let page_url = browser.run(tab, &Ping {}, 5_000).await?.url;
            let origin = origin_of(&page_url).map_err(|_| e.clone())?;
            ask_person(people, asker.as_ref(), name, &origin)
                .await
                .map_err(|why| e.clone().with("elicitation", why))?
        }
        other => other?,
    };
    let lacks = |role: LoginRole| match role {
        LoginRole::Username => secret.username.is_empty(),
        LoginRole::Otp => secret.totp.is_none(),
        LoginRole::Password => false,
    };
    if let Some(&role) = refs.values().find(|r| lacks(**r)) {
        let what = if role == LoginRole::Otp { "a TOTP seed" } else { "a username" };
        return Err(ToolError::invalid_argument(
            role.as_str(),
            format!("credential {name:?} has no {what}; nothing was typed"),
        ));
    }
    let by_ref = !refs.is_empty();
    let ask = LoginFields { refs: by_ref.then_some(refs) };
    let mut fields = browser.run(tab, &ask, 10_000).await?;
    // Found on its own: what the credential has nothing for is left alone.
    fields.retain(|role, _| !lacks(*role));
    if fields.is_empty() {
        return Err(ToolError::field_not_found(format!(
            "the login form here asks for a one-time code only, and credential {name:?} has no TOTP seed; nothing was typed"
        )));
    }
    let page_url = browser.run(tab, &Ping {}, 5_000).await?.url;
    let page_origin = origin_of(&page_url).unwrap_or_else(|_| "null".into());
    check_origins(name, &summary.origins, &page_origin, &fields)?;

    // The values, known as secrets before anything is typed.
    let (values, typed) = values_for(name, &secret, &fields, known)?;
    let fill = Fill { fields: None, refs: Some(values), submit: Some(submit) };
    let filled = browser.run(tab, &fill, 15_000).await?;
    // The username is typed into the page, not told: its lines show no value.
    let hide = |line: &str| {
        if secret.username.chars().count() >= crate::redact::MIN_SECRET_CHARS {
            line.replace(&secret.username, MASK)
        } else {
            line.to_owned()
        }
    };
    let lines: Vec<String> = filled.filled.iter().map(|l| hide(l)).collect();
    let mut text = format!(
        "typed credential {name} ({}) on {page_origin}:\n{}",
        typed.join(", "),
        lines.join("\n")
    );
    let mut now_at = None;
    if filled.submitted {
        let wait =
            Wait { kind: WaitKind::Navigation, token: filled.token.clone(), ..Wait::default() };
        match browser.run(tab, &wait, 5_000).await {
            Ok(w) => {
                let _ = browser.run(tab, &NetworkIdle { quiet_ms: Some(0) }, 3_000).await;
                let url = w.url;
                text.push_str(&format!("\nsubmitted; now at {url}"));
                now_at = Some(url);
            }
            Err(e) if e.code == crate::error::Code::Timeout => {
                text.push_str("\nsubmitted; the page did not navigate within 5 s")
            }
            Err(e) => return Err(e),
        }
    }
    let out = json!({
        "credential": name,
        "origin": page_origin,
        "typed": typed,
        "fields": lines,
        "submitted": filled.submitted,
        "url": now_at,
    });
    let summary_line = format!(
        "typed credential {name} ({}){}",
        typed.join(", "),
        if filled.submitted { ", submitted" } else { "" }
    );
    Ok(ToolOutput {
        content: vec![Content::Text(text)],
        structured: Some(out),
        summary: summary_line,
    })
}

/// What goes into each field found (by its ref), each known as a secret
/// first (the password, the TOTP code made now), and the roles typed.
fn values_for(
    name: &str,
    secret: &CredentialSecret,
    fields: &BTreeMap<LoginRole, LoginField>,
    known: &KnownSecrets,
) -> Result<(BTreeMap<String, Value>, Vec<&'static str>), ToolError> {
    let mut values = BTreeMap::new();
    let mut typed = Vec::new();
    for &role in LoginRole::ALL {
        let Some(field) = fields.get(&role) else { continue };
        let value = match role {
            LoginRole::Username => secret.username.clone(),
            LoginRole::Password => {
                known.add(&format!("credential:{name}.password"), &secret.password);
                secret.password.clone()
            }
            LoginRole::Otp => {
                let seed = secret.totp.as_deref().unwrap_or_default();
                let params = ochre_protocol::totp::parse_secret(seed).map_err(|e| {
                    ToolError::invalid_secret(format!(
                        "the TOTP seed of credential {name:?} is unusable: {}",
                        e.0
                    ))
                })?;
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let code = ochre_protocol::totp::totp_code(&params, now);
                known.add_for(&format!("credential:{name}.otp"), &code, CODE_TTL);
                code
            }
        };
        values.insert(field.ref_id.to_string(), json!(value));
        typed.push(role.as_str());
    }
    Ok((values, typed))
}

/// A credential the person types on ochre's page (a username and a
/// password) for `origin`, used for this call only: never stored.
async fn ask_person(
    people: &crate::people::People,
    asker: &dyn crate::people::UrlAsker,
    name: &str,
    origin: &str,
) -> Result<(CredentialSummary, CredentialSecret), String> {
    const ASK_TIME: std::time::Duration = std::time::Duration::from_secs(300);
    let names = vec![LoginRole::Username.to_string(), LoginRole::Password.to_string()];
    let tool = format!("oc_credential_fill (credential {name:?} for {origin})");
    let message = format!(
        "ochre has no credential {name:?}: sign-in values for {origin}, typed into that page by ochre, not stored, not shown to the agent"
    );
    let mut values = people.ask_by_url(asker, &tool, names, &message, ASK_TIME).await?;
    let summary = CredentialSummary {
        name: name.to_owned(),
        origins: vec![origin.to_owned()],
        username: true,
        ..CredentialSummary::default()
    };
    let secret = CredentialSecret {
        username: values.remove(LoginRole::Username.as_str()).unwrap_or_default(),
        password: values.remove(LoginRole::Password.as_str()).unwrap_or_default(),
        totp: None,
    };
    Ok((summary, secret))
}

/// Refuse, naming both origins, unless the page and every field's document
/// are on origins the credential is bound to.
fn check_origins(
    name: &str,
    bound: &[String],
    page_origin: &str,
    fields: &BTreeMap<LoginRole, LoginField>,
) -> Result<(), ToolError> {
    let allowed = |o: &str| origin_of(o).is_ok_and(|o| bound.contains(&o));
    let refuse = |what: String, origin: &str| {
        Err(ToolError::origin_refused(format!(
            "credential {name:?} is bound to {}; {what} is on {origin}: nothing was typed",
            bound.join(", ")
        ))
        .with("credential", name)
        .with("bound", json!(bound))
        .with("origin", origin))
    };
    if !allowed(page_origin) {
        return refuse("this page".into(), page_origin);
    }
    for (role, f) in fields {
        if !allowed(&f.origin) {
            return refuse(format!("its {role} field (in a frame)"), &f.origin);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_or_page_of_another_origin_is_refused_naming_both() {
        let bound = vec!["http://127.0.0.1:5000".to_owned()];
        let field = |origin: &str| LoginField {
            ref_id: ochre_protocol::browser::RefId(1),
            line: String::new(),
            origin: origin.into(),
        };
        let ok = BTreeMap::from([(LoginRole::Password, field("http://127.0.0.1:5000"))]);
        assert!(check_origins("app", &bound, "http://127.0.0.1:5000", &ok).is_ok());
        let e = check_origins("app", &bound, "http://localhost:5000", &ok).expect_err("page");
        assert_eq!(e.code, crate::error::Code::OriginRefused);
        assert!(
            e.message.contains("http://127.0.0.1:5000")
                && e.message.contains("http://localhost:5000"),
            "{e}"
        );
        let framed = BTreeMap::from([(LoginRole::Password, field("http://localhost:5000"))]);
        let e = check_origins("app", &bound, "http://127.0.0.1:5000", &framed).expect_err("frame");
        assert!(
            e.message.contains("password field (in a frame) is on http://localhost:5000"),
            "{e}"
        );
        let opaque = BTreeMap::from([(LoginRole::Password, field("null"))]);
        assert!(check_origins("app", &bound, "http://127.0.0.1:5000", &opaque).is_err());
    }
}
