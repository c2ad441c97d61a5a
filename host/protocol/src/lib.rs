//! # ochre-protocol
//!
//! What every part of ochre shares, and nothing that needs a browser, a
//! WebAssembly runtime or an MCP server: the registry of error codes
//! ([`codes`]), the structured tool error ([`ToolError`]) that travels to the
//! agent as `{"error":{"code":...,"message":...}}`, what a tool declares
//! ([`tool`]: annotations, scope), what the browser reports ([`browser`]: tabs,
//! page events, trusted input), typed page operations ([`page_ops`]), the
//! levels of messages for the client's operator ([`Level`]), file types
//! ([`mime`]) and, with the `fs`
//! feature, the durable file primitives the stores are built on ([`fs`]).
//!
//! It sits at the bottom of the crate graph: `ochre-browser`, `ochre-host`,
//! `ochre-mcp` and the `ochre` CLI depend on it, it depends on none of them.

#![warn(missing_docs)]

pub mod browser;
#[macro_use]
pub mod codes;
#[cfg(feature = "fs")]
pub mod fs;
pub mod keys;
pub mod mime;
pub mod page_ops;
pub mod recording;
pub mod scripts;
#[cfg(feature = "site")]
pub mod site;
pub mod tool;
#[cfg(feature = "totp")]
pub mod totp;
#[cfg(feature = "url")]
pub mod url;

use serde_json::{Map, Value};

pub use codes::Code;

/// A structured tool failure: a stable `code` (one of the registry's, or a
/// plugin's own: [`Code`]), a `message` saying what to do, and extra fields
/// (`capability`, `field`, ...) merged into the error object.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// Stable code, e.g. [`Code::InvalidArgument`] (`INVALID_ARGUMENT`).
    pub code: Code,
    /// Human-readable explanation with a hint where one helps.
    pub message: String,
    /// Extra fields of the error object.
    pub details: Map<String, Value>,
}

impl ToolError {
    /// A new error.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), details: Map::new() }
    }

    /// Add one extra field.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// Add extra fields: an object's fields, or any other value as `details`.
    pub fn with_details(mut self, details: Value) -> Self {
        match details {
            Value::Object(fields) => self.details.extend(fields),
            Value::Null => {}
            other => {
                self.details.insert("details".into(), other);
            }
        }
        self
    }

    /// `INVALID_ARGUMENT` naming `field`.
    pub fn invalid_argument(field: &str, message: impl Into<String>) -> Self {
        Self::new(Code::InvalidArgument, message).with("field", field)
    }

    code_constructors!();

    /// The JSON body sent to the agent: `{"error":{"code":..,"message":..,...}}`.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("code".into(), Value::String(self.code.as_str().to_owned()));
        obj.insert("message".into(), Value::String(self.message.clone()));
        for (k, v) in &self.details {
            if k != "code" && k != "message" {
                obj.insert(k.clone(), v.clone());
            }
        }
        let mut outer = Map::new();
        outer.insert("error".into(), Value::Object(obj));
        Value::Object(outer)
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

/// Lock a std mutex, whatever a panicking holder left (the data is still
/// whole: every writer here leaves it consistent between statements).
pub fn lock<T: ?Sized>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Read a std `RwLock`, whatever a panicking writer left (see [`lock`]).
pub fn read_lock<T: ?Sized>(l: &std::sync::RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

/// Write a std `RwLock`, whatever a panicking holder left (see [`lock`]).
pub fn write_lock<T: ?Sized>(l: &std::sync::RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

/// How much a message for the client's operator matters (MCP's `LoggingLevel`,
/// the levels ochre uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Detail for debugging a plugin.
    Debug,
    /// Things going as they should.
    Info,
    /// Normal but worth telling (a browser relaunched).
    Notice,
    /// Something the operator may want to fix (a plugin refused, a guard refusal).
    Warning,
    /// Something failed.
    Error,
}
