//! The `ochre` commands, one file each; `args.rs` holds their arguments, `client.rs`
//! runs those the `ochre` binary runs itself (the rest are `ochre-server`'s).

pub(crate) mod browse;
pub(crate) mod client;
pub(crate) mod daemon;
pub(crate) mod doctor;
pub(crate) mod guide;
pub(crate) mod login;
pub(crate) mod plugin;
pub(crate) mod secret;
pub(crate) mod serve;
pub(crate) mod session;
pub(crate) mod tool;
pub(crate) mod tools;
pub(crate) mod totp;
