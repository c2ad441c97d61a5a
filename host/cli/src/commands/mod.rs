//! The `ochre` commands, one file each; `main.rs` holds their arguments.

pub(crate) mod doctor;
pub(crate) mod login;
pub(crate) mod plugin;
pub(crate) mod secret;
pub(crate) mod serve;
pub(crate) mod tools;
pub(crate) mod totp;
