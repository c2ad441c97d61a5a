//! `ochre:plugin/recorder`: recordings (start, stop, list, export).

use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "recorder",
    sensitive: true, // recordings hold what the user did
    link: link_versions!(recorder),
    check: no_rule,
};

fn meta_json(m: &crate::stores::recording::RecordingMeta) -> String {
    serde_json::to_string(m).unwrap_or_else(|_| "{}".into())
}

for_each_version! { recorder =>
    impl recorder::Host for CallState {
        async fn start(
            &mut self,
            label: Option<String>,
            capture_screenshots: bool,
        ) -> WitResult<String> {
            let services = &self.services;
            services
                .recorder
                .start(label, capture_screenshots, &services.session)
                .map(|m| meta_json(&m))
                .map_err(wit_error)
        }

        async fn stop(&mut self) -> WitResult<String> {
            self.services.recorder.stop().map(|m| meta_json(&m)).map_err(wit_error)
        }

        async fn active(&mut self) -> Option<String> {
            self.services.recorder.active().map(|m| meta_json(&m))
        }

        async fn recent(&mut self, limit: u32) -> String {
            serde_json::to_string(&self.services.recorder.list(limit as usize))
                .unwrap_or_else(|_| "[]".into())
        }

        async fn load(&mut self, id: String) -> WitResult<String> {
            let recording = self.services.recorder.load(&id).map_err(wit_error)?;
            Ok(serde_json::to_string(&recording).unwrap_or_else(|_| "{}".into()))
        }

        async fn screenshot(&mut self, id: String, file: String) -> WitResult<Vec<u8>> {
            self.services.recorder.screenshot(&id, &file).map_err(wit_error)
        }

        async fn save_export(
            &mut self,
            id: String,
            file_name: String,
            data: Vec<u8>,
        ) -> WitResult<String> {
            self.services
                .recorder
                .save_export(&id, &file_name, &data)
                .map(|p| p.display().to_string())
                .map_err(wit_error)
        }
    }
}
