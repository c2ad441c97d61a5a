//! A recording as ochre keeps it and its plugins read it: what it is
//! ([`RecordingMeta`], `meta.json`), and its steps ([`RecordedStep`], one line
//! each of `actions.jsonl`): the tool called, its arguments (parameterized:
//! no secret is kept), how it went, where the tab was, and who the elements
//! it named were ([`RecordedTarget`]), so a replay finds them again.
//! The host's recorder writes them; the `recording` plugin replays, repairs,
//! imports and exports them through the SDK, typed the same.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::page_ops::{Identity, Target};

/// A parameter of a recording: `{{name}}` or `{{name=default}}` in its steps.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Param {
    /// Its name (`title`, `password`, `totp:example.com`).
    pub name: String,
    /// A secret: recorded by name only, to be given at replay.
    pub secret: bool,
    /// The value recorded (not for a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// What a recording is, as `meta.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RecordingMeta {
    /// `rec-YYYYMMDD-HHMMSS-xxxx`.
    pub id: String,
    /// The label given at start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `recording` or `stopped`.
    pub status: String,
    /// Start time (RFC 3339).
    pub started_at: String,
    /// Start time, ms since the epoch.
    pub started_ms: u64,
    /// Stop time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<String>,
    /// Stop time, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_ms: Option<u64>,
    /// Why it stopped, when not by `oc_recording_stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_reason: Option<String>,
    /// The parameters its steps take, in order of first use: a value typed is
    /// one with its recorded value as the default; a secret has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<Param>,
    /// Steps recorded.
    pub steps: u64,
    /// Steps that failed.
    #[serde(default)]
    pub failed_steps: u64,
    /// A screenshot is taken after each step.
    pub capture_screenshots: bool,
    /// The server session that recorded it.
    pub session: String,
    /// URL of the current tab after the last step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_url: Option<String>,
    /// Title of the current tab after the last step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_title: Option<String>,
    /// Its version: 1 as recorded, one more for each repair saved
    /// (`versions/v<N>.jsonl` keeps each earlier version's steps).
    #[serde(default = "first_version", skip_serializing_if = "is_first_version")]
    pub version: u64,
    /// Why each later version was saved, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<VersionNote>,
}

fn first_version() -> u64 {
    1
}

fn is_first_version(v: &u64) -> bool {
    *v == 1
}

/// Why a version of a recording was saved, and when.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VersionNote {
    /// The version it made.
    pub version: u64,
    /// When (RFC 3339).
    pub at: String,
    /// Why (a replay's repair: which steps found which target).
    pub reason: String,
}

/// An element a step named, as a recording keeps it: who it was (role, name,
/// rank and tag, as the page said when it was recorded), or how another tool
/// named it (a CSS selector, an XPath, its text: an imported recording's,
/// until a replay finds it and keeps who it is).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RecordedTarget {
    /// How it is found: role, name and rank, or a selector, an XPath, its
    /// text (a recording keeps no ref and no description: neither outlives
    /// the page).
    #[serde(flatten)]
    pub target: Target,
    /// Its tag name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

impl RecordedTarget {
    /// The element as the host finds it ([`Target`]; empty parts left out).
    #[must_use]
    pub fn target(&self) -> Target {
        let s = |v: &Option<String>| v.clone().filter(|x| !x.is_empty());
        let t = &self.target;
        Target {
            role: s(&t.role),
            name: s(&t.name),
            nth: t.nth,
            selector: s(&t.selector),
            xpath: s(&t.xpath),
            text: s(&t.text),
            ..Target::default()
        }
    }

    /// As a message names it: `button "Save"`, else its selector (`None`:
    /// it names nothing a replay can find).
    #[must_use]
    pub fn shown(&self) -> Option<String> {
        let t = self.target();
        (!t.is_empty()).then(|| t.shown())
    }
}

impl From<Identity> for RecordedTarget {
    fn from(who: Identity) -> Self {
        Self {
            target: Target {
                role: Some(who.role),
                name: Some(who.name),
                nth: Some(who.nth),
                ..Target::default()
            },
            tag: Some(who.tag),
        }
    }
}

fn yes() -> bool {
    true
}

/// One step of a recording (a line of `actions.jsonl`). Its default is a
/// step that did not fail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedStep {
    /// Its number, from 1.
    #[serde(default)]
    pub step: u64,
    /// When it ran (RFC 3339; none for an imported step).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ts: String,
    /// The tool called.
    pub tool: String,
    /// Its arguments as recorded: typed values as `{{name=value}}`
    /// parameters, secrets as `{{name}}`.
    #[serde(default)]
    pub args: Value,
    /// How long it took.
    #[serde(default)]
    pub duration_ms: u64,
    /// Whether it succeeded when recorded.
    #[serde(default = "yes")]
    pub ok: bool,
    /// Its one-line outcome.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub outcome: String,
    /// The caller's intent label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// Its error code, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tab it ran in, after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// That tab's URL after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// That tab's title after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Who each ref in its arguments was, by ref.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub targets: BTreeMap<String, RecordedTarget>,
    /// Its screenshot (`shots/NNNN.jpg`), when the recording takes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
}

impl Default for RecordedStep {
    fn default() -> Self {
        Self {
            step: 0,
            ts: String::new(),
            tool: String::new(),
            args: Value::Null,
            duration_ms: 0,
            ok: true,
            outcome: String::new(),
            intent: None,
            error: None,
            tab: None,
            url: None,
            title: None,
            targets: BTreeMap::new(),
            screenshot: None,
        }
    }
}

/// A recording: what it is and its steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// What it is.
    pub meta: RecordingMeta,
    /// Its steps, in order.
    pub steps: Vec<RecordedStep>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_reads_what_older_versions_wrote_and_writes_it_back_the_same() {
        let line = r#"{"ts":"2026-01-01T00:00:00Z","tool":"interact","args":{"ref":"ax_3"},"duration_ms":12,"ok":false,"outcome":"clicked","error":"TIMEOUT","tab":"t1","url":"http://a.test/","title":"A","targets":{"ax_3":{"role":"button","name":"Save","nth":0,"tag":"button"}},"step":2}"#;
        let step: RecordedStep = serde_json::from_str(line).expect("a step");
        assert!(!step.ok);
        assert_eq!(step.targets["ax_3"].target().shown(), "button \"Save\"");
        let back: Value = serde_json::to_value(&step).expect("json");
        assert_eq!(back, serde_json::from_str::<Value>(line).expect("json"));
        let imported: RecordedStep = serde_json::from_str(
            r##"{"tool":"wait_for","args":{"type":"selector","value":"#x"}}"##,
        )
        .expect("an imported step");
        assert!(imported.ok, "a step not said to have failed did not");
        assert!(RecordedStep::default().ok, "nor does a step made in code");
        assert_eq!(imported.targets.len(), 0);
    }

    #[test]
    fn a_target_kept_by_selector_is_found_by_it() {
        let t = RecordedTarget {
            target: Target {
                selector: Some("#save".into()),
                name: Some(String::new()),
                ..Target::default()
            },
            tag: None,
        };
        assert_eq!(t.target(), Target { selector: Some("#save".into()), ..Target::default() });
        assert_eq!(t.shown().as_deref(), Some("selector \"#save\""));
        assert_eq!(RecordedTarget::default().shown(), None);
    }

    #[test]
    fn a_recorded_target_keeps_its_file_shape() {
        let line = serde_json::json!({"role": "button", "name": "Save", "nth": 1, "tag": "button"});
        let t: RecordedTarget = serde_json::from_value(line.clone()).expect("reads");
        assert_eq!(t.tag.as_deref(), Some("button"));
        assert_eq!(t.target().shown(), "button \"Save\"");
        assert_eq!(serde_json::to_value(&t).expect("writes"), line);
    }
}
