//! Stage `hints`: short, rule-based advice ([`crate::hints`]) the session's
//! calls earn, added to a client's call's result or error (a guard's refusal
//! too): `_hint` in the structured result or the error's fields, and a trailing
//! text block.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::{Call, Outcome, Sessions, Stage, done};
use crate::error::ToolError;
use crate::hints::Seen;
use crate::tool::{Content, ToolOutput};

pub(crate) struct Hints {
    pub sessions: Arc<Sessions>,
}

impl Stage for Hints {
    fn name(&self) -> &'static str {
        "hints"
    }

    fn refused(&self, call: &Call<'_>, error: &mut ToolError) {
        self.attach(call, &mut Err(error));
    }

    fn after<'a>(&'a self, call: &'a mut Call<'_>, outcome: &'a mut Outcome) -> BoxFuture<'a, ()> {
        if call.is_top_level() {
            match outcome {
                Ok(out) => self.attach(call, &mut Ok(out)),
                Err(e) => self.attach(call, &mut Err(e)),
            }
        }
        done()
    }
}

impl Hints {
    /// Add the session's hint for this call, if it earns one.
    fn attach(&self, call: &Call<'_>, outcome: &mut Result<&mut ToolOutput, &mut ToolError>) {
        let seen = Seen {
            tool: call.name,
            args: &call.args,
            outcome: match outcome {
                Ok(out) => Ok(out.structured.as_ref()),
                Err(e) => Err((&e.code, &e.details)),
            },
        };
        let Some(hint) = self.sessions.with(call.session(), |s| s.hints.observe(&seen)) else {
            return;
        };
        match outcome {
            Ok(out) => {
                if let Some(Value::Object(m)) = &mut out.structured {
                    m.insert("_hint".into(), hint.to_json());
                }
                out.content.push(Content::Text(hint.text()));
            }
            Err(e) => {
                e.details.insert("_hint".into(), hint.to_json());
            }
        }
    }
}
