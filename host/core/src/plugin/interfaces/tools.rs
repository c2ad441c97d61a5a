//! `ochre:plugin/tools`: calls of other tools, through the whole pipeline.

use super::*;

pub(super) const INTERFACE: HostInterface = HostInterface {
    name: "tools",
    sensitive: true, // calls other plugins' tools
    link: link_versions!(tools),
    check: no_rule,
};

for_each_version! { tools =>
    impl tools::Host for CallState {
        async fn call(
            &mut self,
            name: String,
            args: String,
        ) -> Result<bindings::ochre::plugin::types::ToolOutput, bindings::ochre::plugin::types::ToolError>
        {
            use bindings::ochre::plugin::types as t;
            let Some(caller) = self.services.caller.get() else {
                return Err(wit_error(crate::ToolError::plugin_failed("the host is shutting down",
                )));
            };
            if self.parent.depth >= crate::plugin::MAX_CALL_DEPTH {
                return Err(wit_error(crate::ToolError::permission_denied(format!(
                        "tool calls may nest at most {} deep; {name} was not called",
                        crate::plugin::MAX_CALL_DEPTH
                    ),
                )));
            }
            if caller.provider(&name).as_deref() == Some(self.services.name.as_str()) {
                return Err(wit_error(crate::ToolError::permission_denied(format!(
                        "plugin {} cannot call its own tool {name} through the host",
                        self.services.name
                    ),
                )));
            }
            let args = super::json_arg("args", &format!("arguments of {name}"), &args)?;
            // The call belongs where its caller does: the same session, task
            // run and tabs; the journal names the calling step as its parent.
            let options = self.parent.child();
            let started = std::time::Instant::now();
            // Boxed: this call re-enters the pipeline, which may call a plugin again.
            let fut = caller.call_tool(name, args, options);
            let out = fut.await;
            self.nested_ms
                .fetch_add(started.elapsed().as_millis() as u64, std::sync::atomic::Ordering::Relaxed);
            let out = out.map_err(wit_error)?;
            Ok(t::ToolOutput {
                content: out
                    .content
                    .into_iter()
                    .map(|c| match c {
                        crate::Content::Text(s) => t::Content::Text(s),
                        crate::Content::Image { data, mime_type } => {
                            t::Content::Image(t::Image { data, mime_type })
                        }
                    })
                    .collect(),
                structured: out.structured.map(|v| v.to_string()),
                summary: Some(out.summary),
            })
        }
    }
}
