//! The `browser` and `cdp` interfaces of a host built without a browser: a
//! plugin asking for either is refused when it loads, saying why.

use super::*;

/// An interface this host cannot serve.
const fn without_browser(name: &'static str, sensitive: bool) -> HostInterface {
    HostInterface {
        name,
        sensitive,
        link: |_, _| wasmtime::bail!("this host was built without a browser"),
        check: |_, asked| match asked {
            true => Err("asks for a browser interface, and this host was built without a \
                         browser (ochre-host's `browser` feature is off)"
                .into()),
            false => Ok(()),
        },
    }
}

pub(super) mod browser {
    pub(in super::super) const INTERFACE: super::HostInterface =
        super::without_browser("browser", false);
}

pub(super) mod cdp {
    pub(in super::super) const INTERFACE: super::HostInterface =
        super::without_browser("cdp", true);
}
