//! Tools written in Rust that run inside the host process: the host's own
//! (journal, output handles, task runs, bulk progress) and an embedder's
//! ([`crate::HostBuilder::tool`]). A native tool's calls pass the same pipeline
//! as a plugin's: capability gate, argument validation against its schema,
//! intent guard, journal and trace.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use ochre_host::native::typed_tool;
//! use ochre_host::{Host, ToolOutput};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Greet {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! let greet = typed_tool("greet", "Say hello to someone.", |args: Greet, _options| async move {
//!     Ok(ToolOutput::json(serde_json::json!({"greeting": format!("hello, {}", args.name)})))
//! });
//! let host = Host::builder().tool(greet).build().await?;
//! # Ok(()) }
//! ```

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ToolError;
use crate::tool::{Annotations, CallOptions, ToolInfo, ToolOutput};

/// The `plugin` of an embedder's native tools in the journal and `tools/list`.
pub const NATIVE_PLUGIN: &str = "native";

/// A tool implemented in Rust inside the host.
pub trait HostTool: Send + Sync + 'static {
    /// Its definition: name, description, JSON Schema of its arguments,
    /// capability group, tier, annotations, scope.
    fn info(&self) -> ToolInfo;

    /// Run it. `args` passed the schema of [`HostTool::info`]; `options` are the
    /// call's (its session, task run, progress).
    fn call<'a>(
        &'a self,
        args: &'a Value,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

impl<T: HostTool + ?Sized> HostTool for Arc<T> {
    fn info(&self) -> ToolInfo {
        (**self).info()
    }

    fn call<'a>(
        &'a self,
        args: &'a Value,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        (**self).call(args, options)
    }
}

impl ToolInfo {
    /// The definition of an embedder's native tool: capability `core`, tier 1,
    /// no annotations, scope by name (see [`crate::intent::classify_by_name`]);
    /// change the fields as needed.
    pub fn native(name: &str, description: &str, input_schema: Value) -> Self {
        ToolInfo {
            name: name.into(),
            description: description.into(),
            input_schema,
            capability: "core".into(),
            tier: 1,
            annotations: Annotations::default(),
            intent: false,
            output_mode: false,
            redact: Vec::new(),
            secret_result: None,
            secret_args: Vec::new(),
            plugin: NATIVE_PLUGIN.into(),
            scope: None,
            control: false,
        }
    }

    /// The definition of one of the host's own tools (plugin `host`), of
    /// `tier`, guarded as `scope`.
    pub(crate) fn host_own(
        name: &str,
        description: &str,
        input_schema: Value,
        tier: u8,
        scope: crate::intent::Scope,
    ) -> Self {
        ToolInfo {
            tier,
            plugin: "host".into(),
            scope: Some(scope),
            ..Self::native(name, description, input_schema)
        }
    }
}

/// A native tool with typed arguments: the schema is derived from `A`
/// (`schemars`), the arguments are deserialized into it. Made by [`typed_tool`].
pub struct TypedTool<A, F> {
    info: ToolInfo,
    f: F,
    args: PhantomData<fn(A)>,
}

/// A native tool named `name` whose arguments are an `A` and whose body is `f`.
pub fn typed_tool<A, F, Fut>(name: &str, description: &str, f: F) -> TypedTool<A, F>
where
    A: DeserializeOwned + schemars::JsonSchema,
    F: Fn(A, CallOptions) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    TypedTool { info: ToolInfo::native(name, description, schema_of::<A>()), f, args: PhantomData }
}

/// The JSON schema of a tool's arguments `A` (derived by `schemars`), as a
/// tool's `inputSchema`: what a client needs to build a call, not the
/// generator's metadata (no `$schema`, no `title`).
pub fn schema_of<A: schemars::JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(A)).unwrap_or_default();
    if let Value::Object(m) = &mut schema {
        m.remove("$schema");
        m.remove("title");
    }
    schema
}

impl<A, F> TypedTool<A, F> {
    /// Change the tool's definition (capability, tier, annotations, scope).
    pub fn with_info(mut self, change: impl FnOnce(&mut ToolInfo)) -> Self {
        change(&mut self.info);
        self
    }
}

impl<A, F, Fut> HostTool for TypedTool<A, F>
where
    A: DeserializeOwned + 'static,
    F: Fn(A, CallOptions) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    fn info(&self) -> ToolInfo {
        self.info.clone()
    }

    fn call<'a>(
        &'a self,
        args: &'a Value,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let parsed = ochre_protocol::page_ops::read_args::<A>(&self.info.name, args)
            .map_err(ToolError::from);
        match parsed {
            Ok(a) => Box::pin((self.f)(a, options.clone())),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}
