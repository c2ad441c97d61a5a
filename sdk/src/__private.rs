pub use wit_bindgen;

use super::*;

pub fn definition<T: Tool>(group: &str) -> wit::ToolDefinition {
    let spec = T::spec();
    let mut schema =
        schemars::SchemaGenerator::default().into_root_schema_for::<T::Args>().to_value();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("title");
        obj.remove("$schema");
    }
    let flag = |on: bool, f: wit::HostFeatures| if on { f.bits() } else { 0 };
    let features = wit::HostFeatures::from_bits_retain(
        flag(spec.intent, wit::HostFeatures::INTENT)
            | flag(spec.output_mode, wit::HostFeatures::OUTPUT_MODE),
    );
    wit::ToolDefinition {
        name: T::NAME.to_owned(),
        description: T::DESCRIPTION.to_owned(),
        input_schema: schema.to_string(),
        capability: group.to_owned(),
        tier: spec.tier,
        annotations: wit::Annotations {
            read_only: spec.annotations.read_only,
            destructive: spec.annotations.destructive,
            idempotent: spec.annotations.idempotent,
            open_world: spec.annotations.open_world,
        },
        features,
        scope: match spec.scope {
            Scope::Local => wit::GuardScope::Local,
            Scope::Browser => wit::GuardScope::Browser,
            Scope::NetworkAdjacent => wit::GuardScope::NetworkAdjacent,
        },
        redact: spec.redact,
    }
}

pub fn dispatch<T: Tool>(args: &str) -> Result<wit::ToolOutput, wit::ToolError> {
    let parsed: T::Args = serde_json::from_str(args).map_err(|e| {
        to_wit_error(ToolError::new(crate::Code::InvalidArgument, format!("{}: {e}", T::NAME)))
    })?;
    match T::run(parsed) {
        Ok(out) => Ok(wit::ToolOutput {
            content: out
                .content
                .into_iter()
                .map(|c| match c {
                    Content::Text(t) => wit::Content::Text(t),
                    Content::Json(j) => wit::Content::Json(j),
                    Content::Image { data, mime_type } => {
                        wit::Content::Image(wit::Image { data, mime_type })
                    }
                })
                .collect(),
            structured: out.structured,
            summary: out.summary,
        }),
        Err(e) => Err(to_wit_error(e)),
    }
}

pub fn unknown_tool(name: &str) -> wit::ToolError {
    to_wit_error(ToolError::unknown_tool(format!("this plugin has no tool named {name:?}")))
}

fn to_wit_error(e: ToolError) -> wit::ToolError {
    wit::ToolError {
        code: e.code.as_str().to_owned(),
        message: e.message,
        details: (!e.details.is_empty()).then(|| serde_json::Value::Object(e.details).to_string()),
    }
}

/// Total length of the manifest parts (const, for the custom section's size).
pub const fn manifest_len(parts: &[&str]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        n += parts[i].len();
        i += 1;
    }
    n
}

/// The manifest parts concatenated into a fixed array (const).
pub const fn manifest_bytes<const N: usize>(parts: &[&str]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let mut i = 0;
    while i < parts.len() {
        let bytes = parts[i].as_bytes();
        let mut j = 0;
        while j < bytes.len() {
            out[at] = bytes[j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    out
}
