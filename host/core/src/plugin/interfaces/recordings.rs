//! `ochre:plugin/recordings`: recordings changed after they were made (a
//! replay's repair saved as a new version), or brought in from elsewhere. New in 0.2.0's world: a plugin
//! built against 0.1.0 never imports it.

use super::*;
use crate::stores::recording::RecordedStep;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "recordings",
    sensitive: true, // recordings hold what the user did
    link: |linker, version| match version {
        WitVersion::V0_2 => super::bindings::ochre::plugin::recordings::add_to_linker::<
            _,
            HasSelf<_>,
        >(linker, |s| s),
        WitVersion::V0_1 => {
            wasmtime::bail!("the recordings interface is new in ochre:plugin@0.2.0")
        }
    },
    check: no_rule,
};

impl super::bindings::ochre::plugin::recordings::Host for CallState {
    async fn save_version(
        &mut self,
        id: String,
        steps: String,
        reason: String,
    ) -> WitResult<String> {
        let steps: Vec<RecordedStep> = serde_json::from_str(&steps).map_err(|e| {
            wit_error(crate::ToolError::invalid_argument(
                "steps",
                format!("steps are a JSON array of recorded steps: {e}"),
            ))
        })?;
        self.services
            .recorder
            .save_version(&id, &steps, &reason)
            .map(|m| serde_json::to_string(&m).unwrap_or_else(|_| "{}".into()))
            .map_err(wit_error)
    }

    async fn import(&mut self, label: String, steps: String, params: String) -> WitResult<String> {
        let bad = |field: &str, e: serde_json::Error| {
            wit_error(crate::ToolError::invalid_argument(field, format!("{field}: {e}")))
        };
        let steps: Vec<RecordedStep> = serde_json::from_str(&steps).map_err(|e| bad("steps", e))?;
        let params: Vec<crate::stores::recording::Param> =
            serde_json::from_str(&params).map_err(|e| bad("params", e))?;
        self.services
            .recorder
            .import(&label, steps, params)
            .map(|m| serde_json::to_string(&m).unwrap_or_else(|_| "{}".into()))
            .map_err(wit_error)
    }
}
