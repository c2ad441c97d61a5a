//! # ochre-mcp
//!
//! The MCP face of an ochre [`Host`](ochre_host::Host): an rmcp `ServerHandler`
//! ([`server::McpServer`]) served on stdio ([`stdio`], a transport that answers
//! every line) or Streamable HTTP ([`server::bind_http`]), the `ochre://`
//! resources ([`resources`]), the tool catalogue and the disclosure of tools by
//! tier. The host below knows nothing of MCP.

#![warn(missing_docs)]

pub mod live;
mod origin;
pub mod resources;
pub mod server;
pub mod sessions;
pub mod stdio;
