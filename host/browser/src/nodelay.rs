//! The DevTools connection with Nagle's algorithm off.
//!
//! chromiumoxide (0.9) opens its WebSocket to the browser on a plain
//! `TcpStream`, Nagle's algorithm on: a small frame written while an earlier
//! one is unacknowledged waits for that acknowledgement, which the browser
//! sends with its answer. A click's press and release go out right behind its
//! move (see `input::pipelined`) so that the renderer, which holds a move for
//! its next frame unless a press follows, dispatches all three at once; held
//! back, they reached it only after the move's frame, and every click on a
//! page drawing frames paid one (7-16 ms here, against 1-3 ms with the option
//! set). chromiumoxide neither sets `TCP_NODELAY` nor takes a stream of ours,
//! so the socket it opened is found among this process's descriptors by its
//! peer, the browser's DevTools address, and the option is set on it.

/// Set `TCP_NODELAY` on every TCP connection of this process to the address
/// of `ws_url` (a browser's DevTools WebSocket); how many. Best effort: a
/// descriptor that cannot be read is left as it is.
#[cfg(target_os = "linux")]
pub(crate) async fn no_delay_to(ws_url: &str) -> usize {
    use nix::sys::socket::{SockaddrStorage, getpeername, setsockopt, sockopt};
    use std::os::fd::BorrowedFd;
    let peers = peers_of(ws_url).await;
    if peers.is_empty() {
        return 0;
    }
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return 0;
    };
    let mut set = 0;
    for entry in fds.flatten() {
        let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let socket = std::fs::read_link(entry.path())
            .is_ok_and(|to| to.to_string_lossy().starts_with("socket:"));
        if !socket {
            continue;
        }
        let Ok(peer) = getpeername::<SockaddrStorage>(fd) else {
            continue;
        };
        let addr = match (peer.as_sockaddr_in(), peer.as_sockaddr_in6()) {
            (Some(v4), _) => std::net::SocketAddr::from(std::net::SocketAddrV4::from(*v4)),
            (_, Some(v6)) => std::net::SocketAddr::from(std::net::SocketAddrV6::from(*v6)),
            _ => continue,
        };
        if !peers.contains(&addr) {
            continue;
        }
        // SAFETY: `fd` is open (listed in /proc/self/fd a moment ago) and
        // borrowed for this one call; were another thread to close it and
        // reuse the number meanwhile, the option would be set on that socket,
        // which only makes its small writes go out at once.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        if setsockopt(&borrowed, sockopt::TcpNoDelay, &true).is_ok() {
            set += 1;
        }
    }
    set
}

/// Elsewhere the connection keeps Nagle's algorithm (each click may wait a
/// frame of the page's).
#[cfg(not(target_os = "linux"))]
pub(crate) async fn no_delay_to(_ws_url: &str) -> usize {
    0
}

/// The addresses `ws_url`'s host and port resolve to (an IP literal: itself).
#[cfg(target_os = "linux")]
async fn peers_of(ws_url: &str) -> Vec<std::net::SocketAddr> {
    let Ok(url) = url::Url::parse(ws_url) else {
        return Vec::new();
    };
    let (Some(host), Some(port)) = (url.host(), url.port_or_known_default()) else {
        return Vec::new();
    };
    let host = match host {
        url::Host::Ipv4(ip) => return vec![(ip, port).into()],
        url::Host::Ipv6(ip) => return vec![(ip, port).into()],
        url::Host::Domain(d) => d.to_owned(),
    };
    tokio::net::lookup_host((host.as_str(), port)).await.map(Iterator::collect).unwrap_or_default()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use nix::sys::socket::{getsockopt, sockopt};

    /// The option is set on this process's connection to the address, and
    /// on no other.
    #[tokio::test]
    async fn sets_the_option_on_the_connection_to_that_address_only()
    -> Result<(), Box<dyn std::error::Error>> {
        let a = std::net::TcpListener::bind("127.0.0.1:0")?;
        let b = std::net::TcpListener::bind("127.0.0.1:0")?;
        let to_a = std::net::TcpStream::connect(a.local_addr()?)?;
        let to_b = std::net::TcpStream::connect(b.local_addr()?)?;
        assert!(!getsockopt(&to_a, sockopt::TcpNoDelay)?, "a new socket has Nagle's algorithm on");
        let url = format!("ws://{}/devtools/browser/x", a.local_addr()?);
        assert_eq!(no_delay_to(&url).await, 1);
        assert!(getsockopt(&to_a, sockopt::TcpNoDelay)?);
        assert!(!getsockopt(&to_b, sockopt::TcpNoDelay)?, "another peer's socket is left");
        assert_eq!(no_delay_to("not a url").await, 0);
        // A host name: its addresses (localhost, the listener's port).
        let named = format!("ws://localhost:{}/devtools/browser/x", b.local_addr()?.port());
        assert_eq!(no_delay_to(&named).await, 1);
        assert!(getsockopt(&to_b, sockopt::TcpNoDelay)?);
        Ok(())
    }
}
