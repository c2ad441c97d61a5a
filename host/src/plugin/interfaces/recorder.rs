//! `ochre:plugin/recorder`: recordings (start, stop, list, export).

use super::bindings::ochre::plugin::recorder;
use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "recorder",
    sensitive: true, // recordings hold what the user did
    link: |linker| recorder::add_to_linker::<_, HasSelf<_>>(linker, |s| s),
};

fn meta_json(m: &crate::recording::RecordingMeta) -> String {
    serde_json::to_string(m).unwrap_or_else(|_| "{}".into())
}

impl recorder::Host for CallState {
    async fn start(
        &mut self,
        label: Option<String>,
        capture_screenshots: bool,
    ) -> WitResult<String> {
        let host = self.host()?;
        host.recorder()
            .start(label, capture_screenshots, host.session_id())
            .map(|m| meta_json(&m))
            .map_err(wit_error)
    }

    async fn stop(&mut self) -> WitResult<String> {
        let host = self.host()?;
        host.recorder()
            .stop()
            .map(|m| meta_json(&m))
            .map_err(wit_error)
    }

    async fn active(&mut self) -> Option<String> {
        let host = self.host().ok()?;
        host.recorder().active().map(|m| meta_json(&m))
    }

    async fn recent(&mut self, limit: u32) -> String {
        let Ok(host) = self.host() else {
            return "[]".into();
        };
        serde_json::to_string(&host.recorder().list(limit as usize)).unwrap_or_else(|_| "[]".into())
    }

    async fn load(&mut self, id: String) -> WitResult<String> {
        let host = self.host()?;
        host.recorder()
            .load(&id)
            .map(|v| v.to_string())
            .map_err(wit_error)
    }

    async fn screenshot(&mut self, id: String, file: String) -> WitResult<Vec<u8>> {
        let host = self.host()?;
        host.recorder().screenshot(&id, &file).map_err(wit_error)
    }

    async fn save_export(
        &mut self,
        id: String,
        file_name: String,
        data: Vec<u8>,
    ) -> WitResult<String> {
        let host = self.host()?;
        host.recorder()
            .save_export(&id, &file_name, &data)
            .map(|p| p.display().to_string())
            .map_err(wit_error)
    }
}
