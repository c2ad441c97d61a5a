//! Asking the client: a missing argument by elicitation, a secret by URL, a
//! sampling request (the intent tools).

use super::*;

/// How long the user may take to answer an elicitation.
const ELICIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Ask the user (MCP `elicitation/create`) for the parameters a call lacks
/// (`details.missing`; `details.params` says which are secrets). Secrets are
/// asked on ochre's own page, opened by URL-mode elicitation: the value goes
/// from the person's browser to ochre, never through the client (the MCP
/// specification forbids asking credentials by form); a client without URL
/// mode is not asked for them. Other values are asked by form. Their values
/// (the secrets known from then on), or why none.
pub(super) async fn ask_missing(
    peer: &rmcp::Peer<RoleServer>,
    tool: &str,
    e: &ToolError,
    host: &Host,
    urls: bool,
) -> Result<serde_json::Map<String, Value>, String> {
    use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
    let missing: Vec<&str> = e
        .details
        .get("missing")
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let secret = |name: &str| {
        e.details.get("params").and_then(Value::as_array).is_some_and(|ps| {
            ps.iter().any(|p| p["name"] == name && p["secret"] == Value::Bool(true))
        })
    };
    let (secrets, plain): (Vec<&str>, Vec<&str>) = missing.iter().partition(|n| secret(n));
    let mut given = serde_json::Map::new();
    if !secrets.is_empty() {
        if !urls {
            return Err(format!(
                "{} {} secret: a secret is asked only on ochre's own page (MCP URL-mode \
                 elicitation), which this client does not support; store it with \
                 `ochre secret set NAME` and pass \"secret:NAME\"",
                secrets.join(", "),
                if secrets.len() == 1 { "is a" } else { "are each a" }
            ));
        }
        let names = secrets.iter().map(|s| (*s).to_owned()).collect();
        let message = format!(
            "{tool} needs {}: enter it on ochre's page (it does not pass through this client)",
            secrets.join(", ")
        );
        let asker = PeerUrlAsker(peer.clone());
        let values =
            host.people().ask_by_url(&asker, tool, names, &message, ELICIT_TIMEOUT).await?;
        given.extend(values.into_iter().map(|(k, v)| (k, Value::String(v))));
    }
    if !plain.is_empty() {
        let mut schema = ElicitationSchema::builder();
        for name in &plain {
            schema = schema
                .required_string_property(*name, |s| s.description("a value this flow needs"));
        }
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("{tool} needs values for: {}", plain.join(", ")),
            requested_schema: schema.build().map_err(|e| e.to_string())?,
        };
        let answer = peer
            .create_elicitation_with_timeout(params, Some(ELICIT_TIMEOUT))
            .await
            .map_err(|e| format!("the client could not ask its user: {e}"))?;
        if answer.action != ElicitationAction::Accept {
            return Err("the user declined".into());
        }
        let values = answer.content.and_then(|c| c.as_object().cloned()).unwrap_or_default();
        for name in &plain {
            let v = values
                .get(*name)
                .and_then(Value::as_str)
                .ok_or(format!("the user gave no {name}"))?;
            given.insert((*name).to_owned(), Value::String(v.to_owned()));
        }
    }
    Ok(given)
}

/// Sends the client's user to ochre's pages by URL-mode elicitation.
pub(super) struct PeerUrlAsker(pub(super) rmcp::Peer<RoleServer>);

impl ochre_host::people::UrlAsker for PeerUrlAsker {
    fn open<'a>(
        &'a self,
        message: &'a str,
        url: &'a str,
    ) -> futures::future::BoxFuture<'a, ochre_host::people::Asked> {
        use ochre_host::people::Asked;
        use rmcp::model::{ElicitRequestParams, ElicitationAction};
        Box::pin(async move {
            let mut id = [0u8; 12];
            let _ = getrandom::fill(&mut id);
            let params = ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message: message.to_owned(),
                url: url.to_owned(),
                elicitation_id: data_encoding::HEXLOWER.encode(&id),
            };
            match self.0.create_elicitation_with_timeout(params, Some(ELICIT_TIMEOUT)).await {
                Ok(r) if r.action == ElicitationAction::Accept => Asked::Accepted,
                Ok(_) => Asked::Declined,
                Err(e) => Asked::Failed(e.to_string()),
            }
        })
    }
}

/// `args` with `given` added to its `params`.
pub(super) fn with_params(mut args: Value, given: serde_json::Map<String, Value>) -> Value {
    if !args.is_object() {
        args = Value::Object(serde_json::Map::new());
    }
    if let Some(m) = args.as_object_mut() {
        let params = m.entry("params").or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(p) = params.as_object_mut() {
            p.extend(given);
        }
    }
    args
}

/// The client's model, asked through MCP `sampling/createMessage` (the intent
/// guard's `model` detector).
pub(super) struct PeerSampler(pub(super) rmcp::Peer<RoleServer>);

#[allow(deprecated)] // sampling is deprecated by SEP-2577 but clients still offer it
impl ochre_host::intent::Sampler for PeerSampler {
    fn ask<'a>(
        &'a self,
        system: &'a str,
        user: &'a str,
    ) -> ochre_host::intent::BoxFuture<'a, Result<String, String>> {
        use rmcp::model::{
            CreateMessageRequestParams, Role, SamplingMessage, SamplingMessageContentBlock,
        };
        Box::pin(async move {
            let params = CreateMessageRequestParams::new(
                vec![SamplingMessage::new(Role::User, SamplingMessageContentBlock::text(user))],
                200,
            )
            .with_system_prompt(system);
            let result = self.0.create_message(params).await.map_err(|e| e.to_string())?;
            let text: Vec<String> = result
                .message
                .content
                .into_vec()
                .into_iter()
                .filter_map(|c| match c {
                    SamplingMessageContentBlock::Text(t) => Some(t.text),
                    _ => None,
                })
                .collect();
            Ok(text.join("\n"))
        })
    }
}
