//! Export a recording as a Playwright script a test suite runs: Python
//! (pytest-playwright, or `python FILE` on its own) or TypeScript
//! (`@playwright/test`).
//!
//! Elements are found by the role and accessible name recorded for each ref
//! (`get_by_role`), fields of `fill_form` by their label or name; a parameter
//! of the recording is read from the environment (`TITLE`, its recorded value
//! as the default; a secret has none and must be set: it is never written into
//! the script); a recorded `wait_for` becomes an `expect`. Steps that only
//! read the page, and steps that failed when recorded, are left out (a
//! comment says so); a step the exporter cannot express is a comment too.

use ochre_sdk::params;
use ochre_sdk::recorder::{RecordedStep, Recording};
use serde_json::Value;

/// The languages a recording exports to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    TypeScript,
}

impl Lang {
    pub fn parse(format: &str) -> Option<Self> {
        match format {
            "playwright-python" => Some(Self::Python),
            "playwright-test" => Some(Self::TypeScript),
            _ => None,
        }
    }

    /// The file a suite picks up: `test_<id>.py`, `<id>.spec.ts`.
    pub fn file_name(self, id: &str) -> String {
        let stem = id.replace('-', "_");
        match self {
            Self::Python => format!("test_{stem}.py"),
            Self::TypeScript => format!("{id}.spec.ts"),
        }
    }
}

/// Tools that only read the page: nothing to replay.
const READS: &[&str] = &[
    "read_page",
    "find",
    "query_dom",
    "page_content",
    "page_screenshot",
    "tabs_context",
    "console_capture",
    "network_capture",
    "extract_data",
    "oc_evidence_bundle",
];

/// A string literal both languages read (JSON's escapes are theirs too).
fn lit(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The environment variable of a parameter: `totp:example.com` → `TOTP_EXAMPLE_COM`.
pub fn env_name(param: &str) -> String {
    let mut out: String = param
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

struct Writer {
    lang: Lang,
    lines: Vec<String>,
}

impl Writer {
    fn line(&mut self, s: impl Into<String>) {
        self.lines.push(s.into());
    }

    fn comment(&mut self, s: &str) {
        let mark = if self.lang == Lang::Python { "#" } else { "//" };
        self.line(format!("{mark} {}", s.replace('\n', " ")));
    }

    /// A statement: Python as is, TypeScript awaited.
    fn act(&mut self, py: String, ts: String) {
        match self.lang {
            Lang::Python => self.line(py),
            Lang::TypeScript => self.line(format!("await {ts};")),
        }
    }

    /// A string with parameters as an expression.
    fn text(&self, s: &str) -> String {
        let tokens = params::tokens(s);
        if tokens.is_empty() {
            return lit(s);
        }
        let mut parts = Vec::new();
        let mut rest = s;
        for (token, name, default) in tokens {
            let Some(i) = rest.find(token) else { continue };
            if i > 0 {
                parts.push(lit(&rest[..i]));
            }
            let var = lit(&env_name(name));
            parts.push(match default {
                Some(d) => format!("param({var}, {})", lit(d)),
                None => format!("param({var})"),
            });
            rest = &rest[i + token.len()..];
        }
        if !rest.is_empty() {
            parts.push(lit(rest));
        }
        parts.join(" + ")
    }

    /// A field's value: text, true/false, or a list of options.
    fn value(&self, v: &Value) -> String {
        match v {
            Value::String(s) => self.text(s),
            Value::Bool(b) => match (self.lang, b) {
                (Lang::Python, true) => "True".into(),
                (Lang::Python, false) => "False".into(),
                (Lang::TypeScript, b) => b.to_string(),
            },
            Value::Array(items) => {
                let inner: Vec<String> = items.iter().map(|i| self.value(i)).collect();
                format!("[{}]", inner.join(", "))
            }
            other => lit(&other.to_string()),
        }
    }

    /// The locator of a recorded ref (`get_by_role`), if its role and name were recorded.
    fn by_ref(&self, step: &RecordedStep, r: &str) -> Option<String> {
        let t = &step.targets.get(r)?.target;
        let (Some(role), Some(name)) = (t.role.as_deref(), t.name.as_deref()) else {
            // An imported target not yet seen on a page: its selector.
            let css = t.selector.clone();
            let xpath = t.xpath.as_ref().map(|x| format!("xpath={x}"));
            if let Some(sel) = css.or(xpath) {
                return Some(match self.lang {
                    Lang::Python => format!("page.locator({}).first", lit(&sel)),
                    Lang::TypeScript => format!("page.locator({}).first()", lit(&sel)),
                });
            }
            let text = t.text.as_deref().or(t.name.as_deref())?;
            return Some(match self.lang {
                Lang::Python => format!("page.get_by_text({}, exact=True).first", lit(text)),
                Lang::TypeScript => {
                    format!("page.getByText({}, {{ exact: true }}).first()", lit(text))
                }
            });
        };
        let nth = t.nth.unwrap_or(0);
        let base = match (self.lang, role) {
            (Lang::Python, "generic") => format!("page.get_by_text({}, exact=True)", lit(name)),
            (Lang::TypeScript, "generic") => {
                format!("page.getByText({}, {{ exact: true }})", lit(name))
            }
            (Lang::Python, _) => {
                format!("page.get_by_role({}, name={}, exact=True)", lit(role), lit(name))
            }
            (Lang::TypeScript, _) => {
                format!("page.getByRole({}, {{ name: {}, exact: true }})", lit(role), lit(name))
            }
        };
        Some(match nth {
            0 => base,
            n => format!("{base}.nth({n})"),
        })
    }

    /// The locator of a `fill_form` field: a ref, else its label or name.
    fn field(&self, step: &RecordedStep, key: &str) -> String {
        if let Some(l) = self.by_ref(step, key) {
            return l;
        }
        let attr = lit(&format!("[name={}]", lit(key)));
        match self.lang {
            Lang::Python => {
                format!("page.get_by_label({}).or_(page.locator({attr})).first", lit(key))
            }
            Lang::TypeScript => {
                format!("page.getByLabel({}).or(page.locator({attr})).first()", lit(key))
            }
        }
    }
}

/// The script of recording `id` (`rec` as the recorder loads it).
pub fn render(id: &str, rec: &Recording, lang: Lang) -> String {
    let steps = &rec.steps;
    let all: Vec<Value> = steps.iter().map(|s| s.args.clone()).collect();
    let found = params::placeholders(&Value::Array(all));
    let mut w = Writer { lang, lines: Vec::new() };
    for step in steps {
        write_step(&mut w, step);
    }
    let label = rec.meta.label.as_deref().unwrap_or(id);
    let params_doc: Vec<String> = found
        .iter()
        .map(|p| match &p.default {
            Some(d) => format!("{} (default {})", env_name(&p.name), lit(d)),
            None => format!("{} (a secret: required)", env_name(&p.name)),
        })
        .collect();
    let params_doc = if params_doc.is_empty() { "none".to_owned() } else { params_doc.join(", ") };
    match lang {
        Lang::Python => python(id, label, &params_doc, &w.lines),
        Lang::TypeScript => typescript(id, label, &params_doc, &w.lines),
    }
}

fn write_step(w: &mut Writer, step: &RecordedStep) {
    let n = step.step;
    let tool = step.tool.as_str();
    let args = &step.args;
    if !step.ok {
        w.comment(&format!("step {n}: {tool} failed when recorded (left out)"));
        return;
    }
    if READS.contains(&tool) {
        w.comment(&format!("step {n}: {tool} (reads the page)"));
        return;
    }
    if let Some(i) = &step.intent {
        w.comment(&format!("step {n}: {tool}: {i}"));
    } else {
        w.comment(&format!("step {n}: {tool}"));
    }
    let target = args["ref"].as_str().and_then(|r| w.by_ref(step, r));
    match tool {
        "navigate" => {
            let url = w.text(args["url"].as_str().unwrap_or_default());
            w.act(format!("page.goto({url})"), format!("page.goto({url})"));
        }
        "interact" => {
            let Some(loc) = target else {
                return w.comment("the clicked element was not identified when recorded");
            };
            let (py, ts) = match args["action"].as_str().unwrap_or("click") {
                "double_click" => ("dblclick()", "dblclick()"),
                "hover" => ("hover()", "hover()"),
                _ => ("click()", "click()"),
            };
            w.act(format!("{loc}.{py}"), format!("{loc}.{ts}"));
        }
        "form_input" => {
            let Some(loc) = target else {
                return w.comment("the field was not identified when recorded");
            };
            let v = w.value(&args["value"]);
            w.act(format!("set_field({loc}, {v})"), format!("setField({loc}, {v})"));
        }
        "fill_form" => {
            let mut last = None;
            for group in ["fields", "refs"] {
                if let Some(m) = args[group].as_object() {
                    for (key, value) in m {
                        let loc = w.field(step, key);
                        let v = w.value(value);
                        w.act(format!("set_field({loc}, {v})"), format!("setField({loc}, {v})"));
                        last = Some(loc);
                    }
                }
            }
            if let (Some(loc), Some(true)) = (last, args["submit"].as_bool()) {
                let submit = "e => e.form.requestSubmit()";
                match w.lang {
                    Lang::Python => {
                        w.line("with page.expect_navigation():");
                        w.line(format!("    {loc}.evaluate({})", lit(submit)));
                    }
                    Lang::TypeScript => w.line(format!(
                        "await Promise.all([page.waitForNavigation(), {loc}.evaluate({})]);",
                        lit(submit)
                    )),
                }
            }
        }
        "type" => {
            let Some(loc) = target else {
                return w.comment("the field was not identified when recorded");
            };
            let text = w.text(args["text"].as_str().unwrap_or_default());
            w.act(
                format!("{loc}.press_sequentially({text})"),
                format!("{loc}.pressSequentially({text})"),
            );
            if args["submit"] == Value::Bool(true) {
                w.act(format!("{loc}.press(\"Enter\")"), format!("{loc}.press('Enter')"));
            }
        }
        "press_key" => {
            let key = lit(args["key"].as_str().unwrap_or_default());
            match target {
                Some(loc) => w.act(format!("{loc}.press({key})"), format!("{loc}.press({key})")),
                None => w.act(
                    format!("page.keyboard.press({key})"),
                    format!("page.keyboard.press({key})"),
                ),
            }
        }
        "wait_for" => wait(w, args),
        other => w.comment(&format!("{other} is not exported; do it by hand here")),
    }
}

/// A recorded wait as an assertion.
fn wait(w: &mut Writer, args: &Value) {
    let value = args["value"].as_str().unwrap_or_default();
    let v = w.text(value);
    let py = w.lang == Lang::Python;
    match args["type"].as_str().unwrap_or_default() {
        "selector" => {
            let check = if args["visible"] == Value::Bool(false) { "attached" } else { "visible" };
            let (p, t) = if check == "visible" {
                ("to_be_visible", "toBeVisible")
            } else {
                ("to_be_attached", "toBeAttached")
            };
            w.act(
                format!("expect(page.locator({v}).first).{p}()"),
                format!("expect(page.locator({v}).first()).{t}()"),
            );
        }
        "selector_hidden" => {
            w.act(
                format!("expect(page.locator({v})).to_have_count(0)"),
                format!("expect(page.locator({v})).toHaveCount(0)"),
            );
        }
        "url_match" => {
            // A substring (globs and /regex/ are matched as their text).
            let pattern = value.trim_matches('/');
            if py {
                w.line(format!(
                    "expect(page).to_have_url(re.compile(re.escape({})))",
                    lit(pattern)
                ));
            } else {
                w.line(format!("await expect(page).toHaveURL(new RegExp({}.replace(/[.*+?^${{}}()|[\\]\\\\]/g, '\\\\$&')));", lit(pattern)));
            }
        }
        "function" => {
            w.act(format!("page.wait_for_function({v})"), format!("page.waitForFunction({v})"));
        }
        "timeout" => {
            let ms = value.trim().parse::<u64>().unwrap_or(0);
            w.act(format!("page.wait_for_timeout({ms})"), format!("page.waitForTimeout({ms})"));
        }
        _ => w.act("page.wait_for_load_state()".into(), "page.waitForLoadState()".into()),
    }
}

fn python(id: &str, label: &str, params_doc: &str, body: &[String]) -> String {
    let test = format!("test_{}", id.replace('-', "_"));
    let body: String = body.iter().map(|l| format!("    {l}\n")).collect();
    format!(
        r#""""{label}: exported by ochre from recording {id}.

Run it with pytest-playwright (`pytest {file}`), or on its own
(`python {file}`; PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH picks the browser).
Parameters, from the environment: {params_doc}.
"""
import os
import re

from playwright.sync_api import Locator, Page, expect


def param(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise SystemExit(f"set the environment variable {{name}} (a parameter of this flow)")
    return value


def set_field(field: Locator, value) -> None:
    kind = field.evaluate("e => e.localName === 'select' ? 'select' : (e.type || '').toLowerCase()")
    if kind == "select":
        field.select_option(value)
    elif kind in ("checkbox", "radio"):
        field.set_checked(value in (True, "true", "on"))
    else:
        field.fill(str(value))


def {test}(page: Page) -> None:
{body}    page.wait_for_load_state()


if __name__ == "__main__":
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=os.environ.get("PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH") or None
        )
        {test}(browser.new_page())
        browser.close()
"#,
        file = Lang::Python.file_name(id),
    )
}

fn typescript(id: &str, label: &str, params_doc: &str, body: &[String]) -> String {
    let body: String = body.iter().map(|l| format!("  {l}\n")).collect();
    format!(
        r#"// {label}: exported by ochre from recording {id}.
// Run it with `npx playwright test` (launchOptions.executablePath or
// PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH in your config picks the browser).
// Parameters, from the environment: {params_doc}.
import {{ test, expect, type Locator }} from '@playwright/test';

function param(name: string, fallback?: string): string {{
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`set the environment variable ${{name}} (a parameter of this flow)`);
  return value;
}}

async function setField(field: Locator, value: string | boolean | string[]): Promise<void> {{
  const kind = await field.evaluate((e: any) => (e.localName === 'select' ? 'select' : (e.type || '').toLowerCase()));
  if (kind === 'select') await field.selectOption(value as string | string[]);
  else if (kind === 'checkbox' || kind === 'radio') await field.setChecked(value === true || value === 'true' || value === 'on');
  else await field.fill(String(value));
}}

test({title}, async ({{ page }}) => {{
{body}  await page.waitForLoadState();
}});
"#,
        title = lit(label),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec() -> Recording {
        let meta = json!({"id": "rec-1", "label": "add a book", "status": "stopped",
            "started_at": "2026-01-01T00:00:00Z", "started_ms": 0, "steps": 6,
            "capture_screenshots": false, "session": "s"});
        serde_json::from_value(json!({"meta": meta, "steps": [
            {"step": 1, "tool": "navigate", "args": {"url": "http://h/admin/"}, "ok": true},
            {"step": 2, "tool": "fill_form", "ok": true,
             "args": {"fields": {"Username": "{{username=admin}}", "Password": "{{password}}"}, "submit": true}},
            {"step": 3, "tool": "read_page", "args": {}, "ok": true},
            {"step": 4, "tool": "interact", "ok": true, "args": {"ref": "ax_9"},
             "targets": {"ax_9": {"role": "link", "name": "Create", "nth": 0}}},
            {"step": 5, "tool": "wait_for", "ok": true, "args": {"type": "selector", "value": "#load"}},
            {"step": 6, "tool": "interact", "ok": false, "args": {"query": "nothing"}},
        ]}))
        .expect("a recording")
    }

    #[test]
    fn python_finds_by_role_and_label_and_reads_parameters_from_the_environment() {
        let s = render("rec-1", &rec(), Lang::Python);
        assert!(s.contains(r#"page.goto("http://h/admin/")"#), "{s}");
        assert!(s.contains(r#"set_field(page.get_by_label("Username").or_(page.locator("[name=\"Username\"]")).first, param("USERNAME", "admin"))"#), "{s}");
        assert!(s.contains(r#"param("PASSWORD"))"#), "{s}");
        assert!(
            s.contains(r#"page.get_by_role("link", name="Create", exact=True).click()"#),
            "{s}"
        );
        assert!(s.contains(r##"expect(page.locator("#load").first).to_be_visible()"##), "{s}");
        assert!(s.contains("with page.expect_navigation():"), "{s}");
        assert!(s.contains("step 6: interact failed when recorded"), "{s}");
        assert!(s.contains("PASSWORD (a secret: required)"), "{s}");
    }

    #[test]
    fn typescript_awaits_each_action() {
        let s = render("rec-1", &rec(), Lang::TypeScript);
        assert!(
            s.contains(r#"await page.getByRole("link", { name: "Create", exact: true }).click();"#),
            "{s}"
        );
        assert!(s.contains(r#"await setField(page.getByLabel("Password").or(page.locator("[name=\"Password\"]")).first(), param("PASSWORD"));"#), "{s}");
        assert!(s.contains("test(\"add a book\""), "{s}");
        assert_eq!(env_name("totp:example.com"), "TOTP_EXAMPLE_COM");
    }
}
