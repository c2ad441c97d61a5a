//! The end-to-end tests that drive Chromium: the real `ochre` binary over stdio
//! and HTTP with real MCP clients, on pages served on 127.0.0.1 (fixture sites,
//! real UI libraries from npm, the admin app), and the browser layer itself.

#![allow(clippy::too_many_lines)] // end-to-end scenarios read as one story

mod browser;
mod cli;
mod computer;
mod crawl;
mod credentials;
mod emulate;
mod fidelity;
mod first_screen;
mod guards;
mod handles;
mod har;
mod heal;
mod http;
mod logins;
mod motion;
mod names;
mod netpolicy;
mod network;
mod otlp;
mod output;
mod page_tools;
mod real_web;
mod recorder_import;
mod resources;
mod stdio;
mod surface;
mod tabs;
mod taskruns;
mod traces;
mod truthful;
mod videos;
mod widgets;
mod workflow;
