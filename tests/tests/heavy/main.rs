//! The end-to-end tests that run whole third-party systems or clusters: heavy
//! apps (a notebook, a UI framework, an SQLite browser), an OCI registry, plugin
//! builds with cargo and componentize-py, browser pools (browserless, a Selenium
//! Grid), Playwright replays, the soak under kills, replicas behind HAProxy.
//! `.config/nextest.toml` runs them one at a time.

#![allow(clippy::too_many_lines)] // end-to-end scenarios read as one story

mod heavy_apps;
mod live;
mod oci;
mod plugin_sdk;
mod pool;
mod recordings;
mod soak;
mod tier;
