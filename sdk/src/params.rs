use std::collections::BTreeMap;

use serde_json::Value;

/// One parameter as the saved calls use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// `title`, `password`, `totp:example.com`.
    pub name: String,
    /// The value recorded, if it has one.
    pub default: Option<String>,
}

impl Placeholder {
    /// Resolved by the host from its own stores when no value is given.
    pub fn resolves_itself(&self) -> bool {
        is_secret_ref(&self.name)
    }
    /// It needs a value: no default, and not resolved by the host.
    pub fn required(&self) -> bool {
        self.default.is_none() && !self.resolves_itself()
    }
}

/// `secret:NAME` or `totp:DOMAIN`.
pub fn is_secret_ref(s: &str) -> bool {
    ["secret:", "totp:"].iter().any(|p| s.strip_prefix(p).is_some_and(|r| !r.trim().is_empty()))
}

/// Each `{{...}}` in `s`: (the whole token, its name, its default).
pub fn tokens(s: &str) -> Vec<(&str, &str, Option<&str>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = s[at..].find("{{") {
        let start = at + i;
        let Some(j) = s[start + 2..].find("}}") else { break };
        let end = start + 2 + j + 2;
        let inner = &s[start + 2..end - 2];
        let (name, default) = match inner.split_once('=') {
            Some((n, d)) => (n.trim(), Some(d)),
            None => (inner.trim(), None),
        };
        if !name.is_empty() {
            out.push((&s[start..end], name, default));
        }
        at = end;
    }
    out
}

/// The parameters in `v`, in order of first use.
pub fn placeholders(v: &Value) -> Vec<Placeholder> {
    fn walk(v: &Value, out: &mut Vec<Placeholder>) {
        match v {
            Value::String(s) => {
                for (_, name, default) in tokens(s) {
                    match out.iter_mut().find(|p| p.name == name) {
                        Some(p) if p.default.is_none() => p.default = default.map(str::to_owned),
                        Some(_) => {}
                        None => out.push(Placeholder {
                            name: name.to_owned(),
                            default: default.map(str::to_owned),
                        }),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut out);
    out
}

/// The names of the parameters in `found` that need a value and have none
/// in `given`.
pub fn missing(found: &[Placeholder], given: &BTreeMap<String, String>) -> Vec<String> {
    found
        .iter()
        .filter(|p| p.required() && !given.contains_key(&p.name))
        .map(|p| p.name.clone())
        .collect()
}

/// `v` with each parameter replaced by its value: the one given, else its
/// default (its own, or the one `found` has for it); a secret reference
/// (`secret:NAME`, `totp:DOMAIN`) as a token for the host. A parameter
/// with neither is left as it is.
pub fn fill(v: &Value, given: &BTreeMap<String, String>, found: &[Placeholder]) -> Value {
    match v {
        Value::String(s) => {
            let mut out = s.clone();
            for (token, name, default) in tokens(s) {
                let default = default.or_else(|| {
                    found.iter().find(|p| p.name == name).and_then(|p| p.default.as_deref())
                });
                let value = match (given.get(name), default) {
                    (Some(g), _) if is_secret_ref(g) => format!("{{{{{}}}}}", g.trim()),
                    (Some(g), _) => g.clone(),
                    (None, _) if is_secret_ref(name) => format!("{{{{{name}}}}}"),
                    (None, Some(d)) => d.to_owned(),
                    (None, None) => continue,
                };
                out = out.replacen(token, &value, 1);
            }
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, given, found)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), fill(x, given, found))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameters_are_found_filled_and_secrets_left_to_the_host() {
        let v = json!({"a": "{{title=Quarterly report}}", "b": ["{{password}}", "x {{totp:ex.com}}"], "c": "{{title}}"});
        let found = placeholders(&v);
        assert_eq!(
            found.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["title", "password", "totp:ex.com"]
        );
        assert_eq!(found[0].default.as_deref(), Some("Quarterly report"));
        assert_eq!(missing(&found, &BTreeMap::new()), ["password"]);
        let given: BTreeMap<String, String> =
            [("password".to_owned(), "secret:admin".to_owned())].into_iter().collect();
        assert!(missing(&found, &given).is_empty());
        assert_eq!(
            fill(&v, &given, &found),
            json!({"a": "Quarterly report", "b": ["{{secret:admin}}", "x {{totp:ex.com}}"], "c": "Quarterly report"})
        );
        let given: BTreeMap<String, String> =
            [("title".to_owned(), "Q3 = done".to_owned())].into_iter().collect();
        assert_eq!(fill(&v, &given, &found)["a"], "Q3 = done");
        assert_eq!(fill(&v, &BTreeMap::new(), &[])["c"], "{{title}}");
    }
}
