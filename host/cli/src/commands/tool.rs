//! `ochre TOOL --param value ...`: every tool the session's server offers is a
//! command, its flags read from the tool's input schema (a tool added, by a
//! plugin too, is a command added). The hand-shaped commands (`open`,
//! `click`, ...) come first: a word that names one of them is that command.

use serde_json::{Map, Value, json};

use super::browse::{Conn, call_args};
use crate::{Cli, UsageError};

/// The global flags a tool command takes after its name too (they are the
/// command line's, not the tool's).
pub(crate) struct Globals {
    pub(crate) json: bool,
    pub(crate) session: Option<String>,
    pub(crate) tab: Option<String>,
}

/// Run `words` (the tool's name, then its flags) as a call of that tool.
pub(crate) fn run(cli: &Cli, words: &[String]) -> anyhow::Result<()> {
    let (globals, words) = globals(words)?;
    let mut conn = Conn::with(
        globals.session.as_deref().or(cli.session.as_deref()),
        globals.json || cli.json,
        globals.tab.clone().or_else(|| cli.tab.clone()),
    )?;
    // The listed tools first; the hidden tiers only for a word they lack.
    let mut tools = conn.tools(false)?;
    if words.first().is_some_and(|w| find(&tools, w).is_none()) {
        tools.extend(conn.hidden_tools()?);
    }
    if words.iter().skip(1).any(|w| w == "--help" || w == "-h") {
        let name = words.first().map_or("", String::as_str);
        let tool = find(&tools, name).ok_or_else(|| UsageError(unknown(name, &tools)))?;
        crate::say_raw!("{}", help(tool));
        return Ok(());
    }
    let (tool, args) = prepare(&tools, &words, conn.tab())?;
    conn.call_text(&tool, args)
}

/// A tool command's words (its name, then its flags) as the tool's name and
/// arguments, checked against the tool's schema; `tab` (from `--tab`) goes
/// in as `tabId` where the tool takes one and none is given.
pub(crate) fn prepare(
    tools: &[Value],
    words: &[String],
    tab: Option<&str>,
) -> Result<(String, Value), UsageError> {
    let (name, rest) = words.split_first().ok_or_else(|| UsageError("no command".into()))?;
    let tool = find(tools, name).ok_or_else(|| UsageError(unknown(name, tools)))?;
    let mut args = args_of(&tool["inputSchema"], rest)
        .map_err(|e| UsageError(format!("ochre {name}: {e} (`ochre {name} --help`)")))?;
    if let (Some(tab), Value::Object(a)) = (tab, &mut args)
        && tool["inputSchema"]["properties"].get("tabId").is_some()
        && !a.contains_key("tabId")
    {
        a.insert("tabId".into(), json!(tab));
    }
    Ok((tool["name"].as_str().unwrap_or_default().to_owned(), args))
}

/// `--json`, `--session NAME` and `--tab ID` taken out of a tool command's
/// words (no tool has parameters of those names).
pub(crate) fn globals(words: &[String]) -> Result<(Globals, Vec<String>), UsageError> {
    let mut g = Globals { json: false, session: None, tab: None };
    let mut rest = Vec::new();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let (flag, inline) = match w.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (w.as_str(), None),
        };
        let mut value = |flag: &str| {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| UsageError(format!("{flag} takes a value")))
        };
        match flag {
            "--json" if inline.is_none() => g.json = true,
            "--session" => g.session = Some(value(flag)?),
            "--tab" => g.tab = Some(value(flag)?),
            _ => rest.push(w.clone()),
        }
    }
    Ok((g, rest))
}

/// The tool `word` names: its name as listed, or with `-` for `_`, or
/// without the `oc_` of a plugin's tool.
fn find<'a>(tools: &'a [Value], word: &str) -> Option<&'a Value> {
    let snake = word.replace('-', "_");
    let names = [snake.clone(), format!("oc_{snake}")];
    names.iter().find_map(|n| tools.iter().find(|t| t["name"].as_str() == Some(n)))
}

/// The error for a word that names no command and no tool: the closest names.
fn unknown(word: &str, tools: &[Value]) -> String {
    let snake = word.replace('-', "_");
    let mut names: Vec<String> = tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .map(|n| n.replace('_', "-"))
        .chain(crate::command_names())
        .collect();
    names.sort();
    names.dedup();
    let mut close: Vec<(f64, &String)> = names
        .iter()
        .map(|n| (strsim::jaro_winkler(&snake.replace('_', "-"), n), n))
        .filter(|(score, _)| *score > 0.8)
        .collect();
    close.sort_by(|a, b| b.0.total_cmp(&a.0));
    let hint = match close.first() {
        Some((_, n)) => format!("; did you mean `ochre {n}`?"),
        None => String::new(),
    };
    format!(
        "no command or tool named {word:?}{hint} (`ochre --help` lists the commands, `ochre tools` every tool)"
    )
}

/// A property's name as a flag: `tabId` as `--tab-id`.
fn flag_of(property: &str) -> String {
    let mut out = String::new();
    for c in property.chars() {
        if c.is_ascii_uppercase() {
            out.push('-');
            out.push(c.to_ascii_lowercase());
        } else if c == '_' {
            out.push('-');
        } else {
            out.push(c);
        }
    }
    out
}

/// The JSON types a property takes (`type`, or `anyOf`/`oneOf` of types),
/// but `null` (an optional parameter is left out, not given as null).
fn types_of(schema: &Value) -> Vec<&str> {
    let mut types = all_types(schema);
    types.retain(|t| *t != "null");
    types
}

fn all_types(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => ["anyOf", "oneOf"]
            .iter()
            .filter_map(|k| schema[*k].as_array())
            .flatten()
            .flat_map(all_types)
            .collect(),
    }
}

/// A flag's text as the property's value.
fn value_of(flag: &str, text: &str, schema: &Value) -> Result<Value, String> {
    let types = types_of(schema);
    let json_first = |t: &str| serde_json::from_str::<Value>(t).ok();
    if types.iter().any(|t| *t == "integer" || *t == "number") && !types.contains(&"string") {
        return json_first(text)
            .filter(Value::is_number)
            .ok_or_else(|| format!("--{flag} takes a number, not {text:?}"));
    }
    if types == ["boolean"] {
        return match text {
            "true" => Ok(json!(true)),
            "false" => Ok(json!(false)),
            _ => Err(format!("--{flag} takes true or false, not {text:?}")),
        };
    }
    if types == ["string"] {
        return Ok(json!(text));
    }
    // An object, a list, several types or none said: JSON if it reads as
    // JSON, else the text.
    Ok(json_first(text).unwrap_or_else(|| json!(text)))
}

/// The tool's arguments from its flags (`--name value`, `--name=value`, a
/// boolean's `--name` and `--no-name`, a list's flag once per item), or
/// `call`'s KEY=TEXT, KEY:=JSON or one JSON object.
fn args_of(schema: &Value, words: &[String]) -> Result<Value, String> {
    if words.first().is_some_and(|w| !w.starts_with("--")) {
        return call_args(words).map_err(|e| e.to_string());
    }
    let empty = Map::new();
    let props = schema["properties"].as_object().unwrap_or(&empty);
    let by_flag: Vec<(String, &String, &Value)> =
        props.iter().map(|(k, v)| (flag_of(k), k, v)).collect();
    let mut out = Map::new();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let Some(body) = w.strip_prefix("--") else {
            return Err(format!("{w:?} is not a flag (flags are --name value)"));
        };
        let (flag, inline) = match body.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (body, None),
        };
        let found = by_flag.iter().find(|(f, k, _)| f == flag || k.as_str() == flag);
        let (negated, found) = match (found, flag.strip_prefix("no-")) {
            (Some(f), _) => (false, Some(f)),
            (None, Some(positive)) => {
                (true, by_flag.iter().find(|(f, k, _)| f == positive || k.as_str() == positive))
            }
            (None, None) => (false, None),
        };
        let Some((flag, key, prop)) = found else {
            let known: Vec<String> = by_flag.iter().map(|(f, _, _)| format!("--{f}")).collect();
            return Err(format!("no flag --{flag}; this tool takes {}", known.join(", ")));
        };
        let types = types_of(prop);
        if types == ["boolean"] && inline.is_none() {
            out.insert((*key).clone(), json!(!negated));
            continue;
        }
        if negated {
            return Err(format!("--no-{flag}: only a true-or-false flag has a --no- form"));
        }
        let text = match inline {
            Some(v) => v.to_owned(),
            None => it.next().cloned().ok_or_else(|| format!("--{flag} takes a value"))?,
        };
        if types == ["array"] && !text.trim_start().starts_with('[') {
            let item = value_of(flag, &text, &prop["items"])?;
            let list = out.entry((*key).clone()).or_insert_with(|| json!([]));
            if let Value::Array(items) = list {
                items.push(item);
            }
            continue;
        }
        if out.insert((*key).clone(), value_of(flag, &text, prop)?).is_some() {
            return Err(format!("--{flag} given twice"));
        }
    }
    Ok(Value::Object(out))
}

/// `ochre TOOL --help`: the tool's description and its flags.
fn help(tool: &Value) -> String {
    let name = tool["name"].as_str().unwrap_or_default();
    let mut out = format!("ochre {}: the `{name}` tool.\n\n", name.replace('_', "-"));
    if let Some(d) = tool["description"].as_str() {
        out.push_str(d.trim());
        out.push_str("\n\n");
    }
    let schema = &tool["inputSchema"];
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let empty = Map::new();
    let props = schema["properties"].as_object().unwrap_or(&empty);
    if props.is_empty() {
        out.push_str("It takes no arguments.\n");
        return out;
    }
    out.push_str("Flags:\n");
    for (key, prop) in props {
        let types = types_of(prop);
        let shape = match types.as_slice() {
            ["boolean"] => String::new(),
            ["array"] => " <VALUE> (once per item, or a JSON list)".into(),
            [] => " <JSON or TEXT>".into(),
            ts => format!(" <{}>", ts.join("|").to_uppercase()),
        };
        let must = if required.contains(&key.as_str()) { " (required)" } else { "" };
        out.push_str(&format!("  --{}{shape}{must}\n", flag_of(key)));
        if let Some(d) = prop["description"].as_str() {
            for line in d.trim().lines() {
                out.push_str(&format!("      {line}\n"));
            }
        }
    }
    out.push_str(
        "\nA true-or-false flag alone is true (--no-NAME: false). Also: KEY=TEXT, KEY:=JSON, or one JSON object.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "required": ["url"], "properties": {
            "url": {"type": "string"},
            "tabId": {"type": ["string", "null"]},
            "timeout": {"type": "integer"},
            "fullPage": {"type": ["boolean", "null"]},
            "values": {"type": "array", "items": {"type": "string"}},
            "point": {"type": "object"},
            "target": {"anyOf": [{"type": "string"}, {"type": "object"}]},
        }})
    }

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn flags_are_read_by_the_schemas_types() {
        let got = args_of(
            &schema(),
            &words(&[
                "--url",
                "https://example.com",
                "--tab-id=t2",
                "--timeout",
                "500",
                "--full-page",
                "--values",
                "a",
                "--values",
                "1",
                "--point",
                r#"{"x":1}"#,
                "--target",
                "Save",
            ]),
        );
        assert_eq!(
            got,
            Ok(
                json!({"url": "https://example.com", "tabId": "t2", "timeout": 500, "fullPage": true,
                "values": ["a", "1"], "point": {"x": 1}, "target": "Save"})
            )
        );
        assert_eq!(args_of(&schema(), &words(&["--no-full-page"])), Ok(json!({"fullPage": false})));
        assert_eq!(
            args_of(&schema(), &words(&["--values", r#"["x","y"]"#])),
            Ok(json!({"values": ["x", "y"]}))
        );
        assert_eq!(args_of(&schema(), &words(&["--tabId", "t1"])), Ok(json!({"tabId": "t1"})));
        assert_eq!(
            args_of(&schema(), &words(&["url=x", "timeout:=3"])),
            Ok(json!({"url": "x", "timeout": 3}))
        );
    }

    #[test]
    fn bad_flags_say_what_is_wrong() {
        let err = |w: &[&str]| args_of(&schema(), &words(w)).expect_err("an error");
        assert!(err(&["--timeout", "soon"]).contains("takes a number"));
        assert!(err(&["--nope", "1"]).contains("no flag --nope; this tool takes"));
        assert!(err(&["--url"]).contains("takes a value"));
        assert!(err(&["--url", "a", "--url", "b"]).contains("given twice"));
        assert!(err(&["--no-url"]).contains("only a true-or-false flag"));
        assert!(err(&["--url", "a", "stray"]).contains("is not a flag"));
    }

    #[test]
    fn globals_come_out_and_tools_are_found_by_their_spellings() {
        let (g, rest) = globals(&words(&["--json", "--session=s1", "--tab", "t3", "--url", "x"]))
            .expect("globals");
        assert!(g.json);
        assert_eq!((g.session.as_deref(), g.tab.as_deref()), (Some("s1"), Some("t3")));
        assert_eq!(rest, words(&["--url", "x"]));
        let tools = vec![json!({"name": "network_policy"}), json!({"name": "oc_profile_status"})];
        assert_eq!(
            find(&tools, "network-policy").map(|t| &t["name"]),
            Some(&json!("network_policy"))
        );
        assert_eq!(
            find(&tools, "profile-status").map(|t| &t["name"]),
            Some(&json!("oc_profile_status"))
        );
        assert!(find(&tools, "profile").is_none());
        assert!(unknown("network-polcy", &tools).contains("did you mean `ochre network-policy`"));
        assert_eq!(flag_of("fullPage"), "full-page");
        assert!(
            help(&json!({"name": "t", "inputSchema": schema()}))
                .contains("--url <STRING> (required)")
        );
    }
}
