//! What `tools/list` shows: each tool's schema made compact for a model, the
//! tiers a session sees (progressive disclosure), and the catalogue of the rest.

use super::*;
use serde::Deserialize;

/// The schema as advertised in `tools/list`: what an agent needs to build a call,
/// without the bytes it pays for on every turn (no `null` alternatives nor `null`
/// defaults for optional fields, no number formats, no `minLength`/`minItems` of 1 or `minimum` 0/1, no
/// length caps of 1000 and more, item caps of 50 and more or numeric caps of
/// 100000 and more,
/// no struct docs, no alias properties (`"description": "alias of ..."`) nor
/// unlisted ones (`"Unlisted: ..."`: for other tools, such as a replay), a union
/// of plain types as one `type` list). The host still validates every call against
/// the full schema, so the dropped bounds are enforced with a clear
/// `INVALID_ARGUMENT` and the aliases are still accepted.
pub(super) fn compact_schema(v: &mut Value, top: bool) {
    let Value::Object(m) = v else {
        return;
    };
    if top {
        m.remove("description");
    }
    drop_defaults(m);
    drop_null_types(m);
    if let Some(Value::String(d)) = m.get_mut("description") {
        *d = d.replace('\n', " ");
    }
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        props.retain(|_, p| {
            !p.get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| d.starts_with("alias of ") || d.starts_with("Unlisted: "))
        });
    }
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = m.get_mut(key) {
            for child in children.values_mut() {
                if key == "$defs"
                    && let Value::Object(dm) = child
                {
                    dm.remove("description");
                }
                compact_schema(child, false);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = m.get_mut(key) {
            compact_schema(child, false);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(children)) = m.get_mut(key) {
            children.iter_mut().for_each(|c| compact_schema(c, false));
        }
    }
    merge_plain_any_of(m);
}

/// Keywords that say little an agent needs: formats, titles, bounds that are
/// the defaults anyway (lower bounds of 0 and 1, upper bounds of 100000+).
fn drop_defaults(m: &mut serde_json::Map<String, Value>) {
    m.remove("format");
    m.remove("title");
    type IsDefault = fn(&Value) -> bool;
    let says_little: [(&str, IsDefault); 8] = [
        ("default", Value::is_null),
        ("additionalProperties", |v| *v == Value::Bool(false)),
        ("minLength", |v| *v == 1),
        ("minItems", |v| *v == 1),
        ("maxItems", |v| v.as_u64().is_some_and(|n| n >= 50)),
        ("minimum", |v| v.as_u64().is_some_and(|n| n <= 1)),
        ("maximum", |v| v.as_f64().is_some_and(|n| n >= 100_000.0)),
        ("maxLength", |v| v.as_u64().is_some_and(|n| n >= 1000)),
    ];
    for (key, default) in says_little {
        if m.get(key).is_some_and(default) {
            m.remove(key);
        }
    }
}

/// Optional fields: `["string", "null"]` -> `"string"`, an `anyOf` with `null`
/// -> its other branch; omission says it.
fn drop_null_types(m: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Array(types)) = m.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if kept.len() == 1 {
            m.insert("type".into(), kept[0].clone());
        }
    }
    if let Some(Value::Array(any)) = m.get("anyOf") {
        let kept: Vec<Value> = any
            .iter()
            .filter(|s| s.get("type") != Some(&Value::String("null".into())))
            .cloned()
            .collect();
        if kept.len() == 1 {
            m.remove("anyOf");
            if let Value::Object(inner) = &kept[0] {
                for (k, val) in inner {
                    m.entry(k.clone()).or_insert_with(|| val.clone());
                }
            }
        }
    }
}

/// `anyOf` of bare types (at most one array with `items`) -> one `type` list.
/// After the branches are compacted (no `format` left on them).
fn merge_plain_any_of(m: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Array(any)) = m.get("anyOf") {
        let plain = any.iter().all(|b| {
            b.as_object().is_some_and(|o| {
                o.get("type").is_some_and(Value::is_string)
                    && o.keys().all(|k| k == "type" || (k == "items" && o["type"] == "array"))
            })
        });
        let arrays = any.iter().filter(|b| b.get("items").is_some()).count();
        if plain && arrays <= 1 && !m.contains_key("type") {
            let types: Vec<Value> =
                any.iter().map(|b| b["type"].clone()).filter(|t| t != "null").collect();
            let items = any.iter().find_map(|b| b.get("items").cloned());
            m.remove("anyOf");
            m.insert("type".into(), Value::Array(types));
            if let Some(items) = items {
                m.insert("items".into(), items);
            }
        }
    }
}

pub(super) fn to_mcp_tool(info: &ochre_host::ToolInfo) -> Tool {
    let mut schema = info.input_schema.clone();
    compact_schema(&mut schema, true);
    if info.intent
        && let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut)
    {
        props.insert(
            "intent".into(),
            serde_json::json!({"type": "string", "maxLength": ochre_host::pipeline::MAX_INTENT_CHARS}),
        );
    }
    if info.output_mode
        && let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut)
    {
        props.insert(
            "output_mode".into(),
            serde_json::json!({"type": "string", "enum": ["inline", "handle", "auto"],
                "description": "handle: store it, answer a handle for oc_output_fetch; auto: handle if over output_inline_limit_bytes (32768)"}),
        );
        props.insert("output_inline_limit_bytes".into(), serde_json::json!({"type": "integer"}));
    }
    let description = if info.intent {
        format!(
            "{} Pass intent=\"...\" (≤{} chars) to label this action in audit logs.",
            info.description,
            ochre_host::pipeline::MAX_INTENT_CHARS
        )
    } else {
        info.description.clone()
    };
    let object = match schema {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    let mut tool = Tool::default();
    tool.name = info.name.clone().into();
    tool.description = Some(description.into());
    tool.input_schema = Arc::new(object);
    let a = info.annotations;
    // Hints equal to MCP's defaults (readOnly false, idempotent false) are left out.
    tool.annotations = Some(ToolAnnotations::from_raw(
        None,
        a.read_only.then_some(true),
        (!a.read_only).then_some(a.destructive),
        (!a.read_only && a.idempotent).then_some(true),
        Some(a.open_world),
    ));
    tool
}

impl McpServer {
    pub(super) fn disclosure(&self) -> std::sync::MutexGuard<'_, Disclosure> {
        lock(&self.disclosure)
    }

    /// The tools this session lists now, plus `expand_tools` while some are hidden.
    pub(super) fn listed(&self, r: &Ready) -> Vec<Tool> {
        let d = self.disclosure();
        let mut out: Vec<Tool> = r
            .tools
            .iter()
            .filter(|(t, tier)| *tier <= d.tier || d.revealed.contains(t.name.as_ref()))
            .map(|(t, _)| t.clone())
            .collect();
        if out.len() < r.tools.len() {
            out.push(expand_tool_def(r.tools.len() - out.len()));
        }
        out
    }

    /// `expand_tools {tier?, name?}`: reveal hidden tools of enabled groups.
    pub(super) fn expand(&self, r: &Ready, args: &Value) -> Result<(Vec<Tool>, Value), ToolError> {
        let ExpandArgs { tier, name } = ExpandArgs::parse(args)?;
        let name = name.as_deref();
        if let Some(n) = name {
            if let Some(e) = r.host.capability_disabled(n) {
                return Err(e);
            }
            if !r.tools.iter().any(|(t, _)| t.name == n) {
                return Err(ToolError::unknown_tool(format!("no tool named {n:?}")));
            }
        }
        let before: std::collections::BTreeSet<String> =
            self.listed(r).iter().map(|t| t.name.to_string()).collect();
        {
            let mut d = self.disclosure();
            if let Some(t) = tier {
                d.tier = d.tier.max(t);
            }
            if let Some(n) = name {
                d.revealed.insert(n.to_owned());
            }
        }
        let new: Vec<Tool> = self
            .listed(r)
            .into_iter()
            .filter(|t| t.name != EXPAND_TOOLS && !before.contains(t.name.as_ref()))
            .collect();
        let listed = self.listed(r).len();
        let body = serde_json::json!({
            "revealed": new.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
            "listed": listed,
            "tools": new,
        });
        Ok((new, body))
    }
}

/// The tool catalogue: every tool this host offers (and `expand_tools`), in the
/// order `tools/list` gives them, with group, tier, plugin and a one-line purpose.
pub fn catalogue(host: &Host) -> Vec<Value> {
    let purpose = |d: &str| -> String {
        let first = d.split(". ").next().unwrap_or(d).trim_end_matches('.');
        format!("{first}.")
    };
    let mut out: Vec<Value> = host
        .tools()
        .into_iter()
        .map(|t| {
            serde_json::json!({
                "name": t.name, "group": t.capability, "tier": t.tier.max(1),
                "plugin": t.plugin, "purpose": purpose(&t.description),
                "inputSchema": *to_mcp_tool(t).input_schema,
            })
        })
        .collect();
    out.push(serde_json::json!({
        "name": EXPAND_TOOLS, "group": "core", "tier": 1, "plugin": "host",
        "purpose": "Reveal hidden tools (tier 2 or 3, or one by name) for this session.",
        "inputSchema": *expand_tool_def(0).input_schema,
    }));
    out
}

/// `docs/tools.md`: the catalogue as Markdown, grouped by tier.
pub fn catalogue_markdown(catalogue: &[Value]) -> String {
    let mut md = [
        "# ochre tools",
        "",
        "<!-- generated by `ochre tools --markdown`; a test keeps it fresh -->",
        "",
        "Tier 1 tools are listed at start; `expand_tools` reveals tiers 2 and 3 for a session.",
        "Groups are enabled with `--tools-only` / `--disable-tools`.",
        "",
        "| group | tier | tool | purpose |",
        "| --- | ---: | --- | --- |",
        "",
    ]
    .join("\n");
    let mut rows: Vec<&Value> = catalogue.iter().collect();
    rows.sort_by_key(|e| {
        (
            e["tier"].as_u64(),
            e["group"].as_str() != Some("core"),
            e["group"].as_str().map(str::to_owned),
        )
    });
    for e in rows {
        md.push_str(&format!(
            "| {} | {} | `{}` | {} |\n",
            e["group"].as_str().unwrap_or(""),
            e["tier"],
            e["name"].as_str().unwrap_or(""),
            e["purpose"].as_str().unwrap_or("").replace('|', "\\|")
        ));
    }
    md
}

/// The definition of `expand_tools`, saying how many tools are hidden.
/// `expand_tools`' arguments: its schema is derived from them, like every
/// host tool's, and a call is read into them.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ExpandArgs {
    // 2: the specialist tools; 3: everything (said in the tool's description:
    // no field descriptions, each byte of tools/list is paid on every turn).
    #[serde(default, deserialize_with = "tier_of")]
    #[schemars(range(min = 2, max = 3))]
    tier: Option<u8>,
    // One tool, by name.
    #[serde(default)]
    name: Option<String>,
}

impl ExpandArgs {
    fn parse(args: &Value) -> Result<Self, ToolError> {
        const TIERS: &str = "tier is 2 (specialist tools) or 3 (everything)";
        let a: Self = ochre_protocol::page_ops::read_args(EXPAND_TOOLS, args)?;
        match (a.tier, &a.name) {
            (Some(2..=3), _) | (None, Some(_)) => Ok(a),
            (Some(_), _) => Err(ToolError::invalid_argument("tier", TIERS)),
            (None, None) => Err(ToolError::invalid_argument(
                "tier",
                "expand_tools needs `tier` (2 or 3) or a tool `name`",
            )),
        }
    }
}

/// A tier as a number, or as a string of one (some clients send every
/// argument as a string); its range is checked by [`ExpandArgs::parse`].
/// (A number past 255 reads as 255: out of range all the same.)
fn tier_of<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .map(|t| Some(u8::try_from(t).unwrap_or(u8::MAX)))
            .ok_or_else(|| D::Error::custom(format!("tier is a number, not {v}"))),
    }
}

fn expand_tool_def(hidden: usize) -> Tool {
    let mut tool = Tool::default();
    tool.name = EXPAND_TOOLS.into();
    tool.description = Some(
        format!(
            "Reveal {hidden} hidden tools: tier 2 (screenshots, HTML, console, extraction, uploads, recordings, crawls, task runs, workflows), 3 (all), or one by name."
        )
        .into(),
    );
    let mut schema = ochre_host::native::schema_of::<ExpandArgs>();
    compact_schema(&mut schema, true);
    if let Value::Object(m) = schema {
        tool.input_schema = Arc::new(m);
    }
    tool.annotations = Some(ToolAnnotations::from_raw(None, Some(true), None, None, Some(false)));
    tool
}

/// MCP's levels in order (debug 0 .. emergency 7).
#[allow(deprecated)]
pub(super) fn rank(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
