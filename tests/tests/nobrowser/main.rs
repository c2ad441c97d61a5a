//! The end-to-end tests that need no browser: the tool catalogue and the pinned
//! `tools/list`, hostile and installed plugins, an embedder's host. One test
//! binary per tier (`nobrowser`, `browser`, `heavy`): each links the whole host
//! once, and cargo-nextest runs the tests of all three in parallel.

#![allow(clippy::too_many_lines)] // end-to-end scenarios read as one story

mod catalogue;
mod docs;
mod embedding;
mod golden;
mod hostile;
mod install;
mod logins;
mod startup;
mod wasm_reuse;
