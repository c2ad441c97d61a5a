//! Getting a browser: finding Chromium, launching it (or attaching to
//! endpoints), and noticing that it died.

use super::*;
use serde_json::json;

/// The Chromium features ochre's browser runs without, given in one
/// `--disable-features` switch merged with the launcher's own list: the
/// back/forward cache and paint holding (see the launch flags), the
/// before-unload check's shortcut, and the omnibox's two WebUI popups.
pub const DISABLED_FEATURES: &[&str] = &[
    "BackForwardCache",
    "PaintHolding",
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
];

/// The size of a launched browser's pages (CSS pixels): its window is sized
/// for them (see `size_window`).
pub(crate) const VIEWPORT: (u32, u32) = (1280, 720);

/// Executables tried, in order, when no path is given.
const CANDIDATES: &[&str] =
    &["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];

/// Chromium's headless shell, tried first for a headless browser when no
/// path is given: the same Blink and DevTools without the desktop browser
/// around them (no window, tab strip or profile preferences), so a launch
/// costs less than half the CPU and pages less too (as Playwright's headless
/// default). A headed browser is always a full one.
const HEADLESS_SHELLS: &[&str] = &["chromium-headless-shell", "chrome-headless-shell"];

/// The first of `names` found as a file in a directory of `PATH` (names in
/// order, each through all of `PATH`).
pub fn find_on_path<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    names.into_iter().find_map(|name| {
        std::env::split_paths(&path).map(|dir| dir.join(name)).find(|c| c.is_file())
    })
}

/// The binary a launch script only runs with its own arguments: Debian's
/// `/usr/bin/chromium-headless-shell` is `#!/bin/sh -e` and then
/// `/usr/lib/chromium/chromium-headless-shell "$@"`, with no `exec`. Run
/// through the script, the browser would be the script's child, and a
/// `kill -9` of the server would take only the script with it (the lifeline
/// binds the launched process), leaving the browser running. `None` for
/// anything else (a binary, a script that does more, as Debian's
/// `/usr/bin/chromium`, which ends in `exec`).
fn script_target(exe: &std::path::Path) -> Option<PathBuf> {
    use std::io::Read;
    if std::fs::metadata(exe).ok()?.len() > 4096 {
        return None;
    }
    let text = std::fs::read_to_string(exe).ok()?;
    let mut lines = text.lines();
    if !lines.next()?.starts_with("#!") {
        return None;
    }
    let mut commands = lines.map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
    let (only, None) = (commands.next()?, commands.next()) else {
        return None;
    };
    let only = only.strip_prefix("exec ").unwrap_or(only);
    let target = only.strip_suffix("\"$@\"")?.trim_end();
    if !target.starts_with('/')
        || target.contains(|c: char| c.is_whitespace() || "$`'\"\\;&|<>(){}*?[]~".contains(c))
    {
        return None;
    }
    let mut magic = [0u8; 4];
    std::fs::File::open(target).ok()?.read_exact(&mut magic).ok()?;
    (magic == *b"\x7fELF").then(|| PathBuf::from(target))
}

const HEADED_HINT: &str = "a headed browser needs a display: run ochre in a desktop session (or under `xvfb-run`), or leave --headed out (the live view shows a headless browser)";

/// `--headed` on Linux with no display to open a window on: refused before
/// launching, saying so (Chromium would exit with a message about X11).
fn no_display_for_headed() -> Result<(), ToolError> {
    if !cfg!(target_os = "linux") {
        return Ok(());
    }
    let set = |v: &str| std::env::var_os(v).is_some_and(|d| !d.is_empty());
    if set("DISPLAY") || set("WAYLAND_DISPLAY") {
        return Ok(());
    }
    Err(ToolError::browser_unavailable(format!(
        "--headed, but neither DISPLAY nor WAYLAND_DISPLAY is set; {HEADED_HINT}"
    )))
}

const INSTALL_HINT: &str = "install Chromium (Debian: `apt-get install -y chromium chromium-headless-shell`), or pass --chrome-path or --cdp-endpoint";

impl BrowserManager {
    /// A launched browser's tab shows its page at [`VIEWPORT`]: its window
    /// sized for that (not emulated: an emulated viewport is undone on the
    /// old document whenever a navigation leaves it, which lays it all out
    /// again first). An attached browser's windows are left as they are.
    pub(crate) async fn size_window(&self, page: &Page) {
        if !self.inner.options.endpoints.is_empty() {
            return;
        }
        let sized = async {
            let w = raw_command(page, "Browser.getWindowForTarget", json!({})).await?;
            let (width, height) = VIEWPORT;
            raw_command(
                page,
                "Browser.setContentsSize",
                json!({"windowId": w["windowId"], "width": width, "height": height}),
            )
            .await
        };
        if let Err(e) = sized.await {
            tracing::debug!(error = %e.message, "a tab's window keeps its size");
        }
    }

    pub(super) fn tell(&self, level: ochre_protocol::Level, message: String) {
        if let Some(notices) = self.inner.notices.get() {
            notices(level, message);
        }
    }

    /// How many times a browser was launched or attached.
    pub fn launches(&self) -> u64 {
        self.inner.launches.load(Ordering::Relaxed)
    }

    /// The browser to launch: `--chrome-path`, else the first candidate on
    /// `PATH`; a script that only runs a binary, that binary (see
    /// [`script_target`]).
    pub(super) fn find_executable(&self) -> Result<PathBuf, ToolError> {
        self.find_named().map(|exe| script_target(&exe).unwrap_or(exe))
    }

    fn find_named(&self) -> Result<PathBuf, ToolError> {
        if let Some(p) = &self.inner.options.chrome_path {
            if p.exists() {
                return Ok(p.clone());
            }
            return Err(ToolError::browser_unavailable(format!(
                "--chrome-path {} does not exist; {INSTALL_HINT}",
                p.display()
            )));
        }
        let shells = if self.inner.options.headed { &[][..] } else { HEADLESS_SHELLS };
        if let Some(found) = find_on_path(shells.iter().chain(CANDIDATES).copied()) {
            return Ok(found);
        }
        if self.inner.options.headed
            && let Some(shell) = find_on_path(HEADLESS_SHELLS.iter().copied())
        {
            return Err(ToolError::browser_unavailable(format!(
                "--headed needs Chromium or Chrome, and only Chromium's headless shell is on PATH ({}), which shows no window; {INSTALL_HINT}",
                shell.display()
            )));
        }
        Err(ToolError::browser_unavailable(format!(
            "no Chromium or Chrome found on PATH; {INSTALL_HINT}"
        )))
    }

    /// Launch a managed Chromium (a temporary profile unless one is given).
    pub(super) async fn launch(
        &self,
    ) -> Result<(Browser, chromiumoxide::Handler, Option<ProfileDir>), ToolError> {
        let opts = &self.inner.options;
        if opts.headed {
            no_display_for_headed()?;
        }
        let exe = self.find_executable()?;
        let (dir, profile) = match &opts.user_data_dir {
            Some(d) => (d.clone(), None),
            None => {
                let d = std::env::temp_dir().join(format!(
                    "{TEMP_PROFILE_PREFIX}{}-{}",
                    std::process::id(),
                    self.launches()
                ));
                let _ = std::fs::remove_dir_all(&d);
                (d.clone(), Some(ProfileDir(d)))
            }
        };
        let mut builder = chromiumoxide::BrowserConfig::builder()
            .chrome_executable(&exe)
            .no_sandbox()
            .user_data_dir(&dir)
            // Each tab's window is then sized for a page of VIEWPORT
            // (`size_window`: headless Chromium draws a frame of its own
            // around it). No viewport emulation: the launcher's turns on touch
            // emulation (pages then take the browser for a phone's: a
            // coarse pointer, no hover, touch events, an 800x600 portrait
            // screen), and every override is cleared on the old document when
            // a navigation leaves it, which then restyles and lays it out
            // again (400 ms on rustdoc's Vec page, before the next page may
            // load). `emulate` sets a device when asked.
            .window_size(VIEWPORT.0, VIEWPORT.1)
            .viewport(None)
            .respect_https_errors()
            .launch_timeout(Duration::from_secs(30))
            .request_timeout(Duration::from_secs(30))
            .args([
                "disable-gpu",
                "disable-quic",
                "no-first-run",
                "disable-background-networking",
                "disable-component-update",
                "disable-sync",
                "disable-default-apps",
                // Leaving a page must not keep it alive in the back/forward cache
                // (that moves the next document to a fresh renderer, ~300 ms
                // here), and paint holding only delays pages: off, as other
                // automation servers do.
                "disable-back-forward-cache",
                // A tab in the background (its popup took the focus, an agent
                // works in several tabs) must run its timers and rendering as
                // fast as the front one.
                "disable-background-timer-throttling",
                "disable-backgrounding-occluded-windows",
                "disable-renderer-backgrounding",
                // No window of its own at start: the new-tab page Chromium
                // would open loads for a second or two beside the first page
                // (dozens of requests, a renderer), and no tab of ochre's is it.
                "no-startup-window",
                // Each site's frames in a renderer of their own, as desktop
                // Chrome does by default: ochre reads a cross-site frame
                // through its own target. Chromium's headless shell (which
                // --chrome-path may name) keeps them in the page's renderer
                // without it.
                "site-per-process",
            ])
            // One switch, merged with the launcher's own list: given twice,
            // Chromium keeps one of them (which one followed a hash map's
            // order, so these were off in some launches only). The omnibox's
            // two WebUI popups are pages of the browser's own, loaded for
            // every window (ochre's tabs are windows): a third of a new tab's
            // time here, for a menu no agent opens (a headed browser falls
            // back to the classic one).
            .arg(("disable-features", DISABLED_FEATURES));
        if opts.headed {
            builder = builder.with_head();
        } else {
            // A headless browser has no pointing device: pages would match
            // `(hover: none)` and `(pointer: none)` and hide what shows
            // under a mouse. Its pages are a desktop's, with a mouse.
            builder = builder.arg(
                "blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4",
            );
        }
        // The shared tabs' context (the browser's default one) is policed
        // through the shared proxy; sessions' contexts get their own.
        if let Some(proxy) = self.policy_proxy(&None).await? {
            builder = builder.args([
                format!("proxy-server={}", proxy.server()),
                "proxy-bypass-list=<-loopback>".to_owned(),
                // WebRTC through the proxy, as the profile's preference below
                // says too: a browser that reads no profile preferences
                // (chromium-headless-shell) takes it from its command line,
                // and without it sent UDP past the policy.
                "force-webrtc-ip-handling-policy=disable_non_proxied_udp".to_owned(),
            ]);
            netpolicy::webrtc_through_proxy(&dir).map_err(|e| {
                ToolError::browser_unavailable(format!(
                    "cannot keep WebRTC to the policed proxy in the profile {}: {e}",
                    dir.display()
                ))
            })?;
        }
        if let Some(launcher) = &opts.launcher {
            builder = builder.chrome_executable(launcher).envs(lifeline::launcher_env(&exe));
        }
        let config = builder
            .build()
            .map_err(|e| ToolError::browser_unavailable(format!("browser config: {e}")))?;
        let (mut b, h) = Browser::launch(config).await.map_err(|e| {
            let locked = opts.user_data_dir.is_some()
                && dir.join("SingletonLock").exists();
            let why = if locked {
                format!(
                    "the profile {} is locked by another Chrome; close it or use another --user-data-dir",
                    dir.display()
                )
            } else {
                format!("{e}")
            };
            // A headed browser that did not start is most often its display.
            let fix = if opts.headed { HEADED_HINT } else { INSTALL_HINT };
            ToolError::browser_unavailable(format!("cannot launch {}: {why}; {fix}", exe.display()))
        })?;
        crate::nodelay::no_delay_to(b.websocket_address()).await;
        if let Some(run_dir) = &opts.run_dir {
            let pid = b.get_mut_child().and_then(|c| c.as_mut_inner().id());
            lifeline::write_record(run_dir, pid, Some(&dir), profile.is_some());
        }
        Ok((b, h, profile))
    }

    /// Start (launch or attach) browser `i` of the pool.
    pub(super) async fn start(&self, i: usize) -> Result<Session, ToolError> {
        let slot = self.slot(i);
        let alive = Arc::new(AtomicBool::new(true));
        let (browser, mut handler, profile, grid) = match &slot.endpoint {
            Some(endpoint) => {
                let (b, h, grid) = attach(endpoint, &alive).await?;
                (b, h, None, grid)
            }
            None => {
                let (b, h, profile) = self.launch().await?;
                (b, h, profile, None)
            }
        };
        let flag = alive.clone();
        let gone = slot.gone.clone();
        let closing = self.inner.closing.clone();
        let inner = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            // Unparsable events (CDP drift) are skipped inside the handler; an error
            // that reaches us is the connection failing, after which the stream never
            // recovers: stop, so that the next call relaunches and in-flight commands
            // fail at once instead of hanging.
            while let Some(ev) = handler.next().await {
                if let Err(e) = ev {
                    tracing::warn!(error = %e, "browser connection error");
                    break;
                }
            }
            // Dead before the handler goes: dropping it fails the commands in
            // flight, and a call that sees that must find the session dead.
            flag.store(false, Ordering::Relaxed);
            drop(handler);
            gone.notify_waiters();
            if closing.load(Ordering::Relaxed) {
                tracing::debug!("the browser connection ended");
            } else {
                tracing::warn!("the browser connection ended");
                if let Some(inner) = inner.upgrade() {
                    pool::mark_down(
                        &inner,
                        i,
                        "its connection ended (it crashed, was killed or closed it)",
                    );
                }
            }
        });
        self.inner.launches.fetch_add(1, Ordering::Relaxed);
        *lock(&slot.live) = Some(pool::Live {
            alive: alive.clone(),
            profile: profile.as_ref().map(|p| p.0.clone()),
        });
        self.watch_browser(i, &browser).await;
        Ok(Session {
            slot: i,
            browser: Arc::new(browser),
            alive,
            current: Default::default(),
            owner_contexts: Default::default(),
            _profile: profile,
            grid,
            frames: None,
            front: None,
        })
    }

    /// The browser's executable (managed mode; `None` when attaching to
    /// endpoints), or why there is none.
    pub fn executable(&self) -> Result<Option<PathBuf>, ToolError> {
        if !self.inner.options.endpoints.is_empty() {
            return Ok(None);
        }
        self.find_executable().map(Some)
    }

    /// Start (or reach) the browser and ask its product and version, e.g.
    /// `HeadlessChrome/131.0.6778.85`.
    pub async fn version(&self) -> Result<String, ToolError> {
        let guard = self.session().await?;
        let s = guard.as_ref().ok_or_else(|| ToolError::browser_unavailable("no browser"))?;
        bounded(10_000, "asking the browser's version", async {
            s.browser
                .version()
                .await
                .map(|v| v.product)
                .map_err(|e| cdp_error("cannot ask the browser's version", e))
        })
        .await
    }
}

/// Attach to a running browser (`--cdp-endpoint`): its websocket found (bounded;
/// a Selenium Grid starts a session for it), then the connection opened
/// (bounded: a grid may queue it).
pub(super) async fn attach(
    endpoint: &Endpoint,
    alive: &Arc<AtomicBool>,
) -> Result<(Browser, chromiumoxide::Handler, Option<grid::GridSession>), ToolError> {
    const LIMIT: Duration = Duration::from_secs(15);
    let fail = |why: String| {
        // A grid at its limit (browserless past CONCURRENT + QUEUED) says 429.
        let full = if why.contains("429") {
            " (the endpoint has all the sessions it takes: it is full)"
        } else {
            ""
        };
        ToolError::browser_unavailable(format!(
            "cannot attach to the browser at {}: {}{full}",
            endpoint.redacted(),
            endpoint.scrub(&why)
        ))
    };
    let found = async {
        if endpoint.is_grid() {
            grid::new_session(endpoint, alive.clone()).await.map(|(ws, g)| (ws, Some(g)))
        } else {
            pool::websocket_url(endpoint).await.map(|ws| (ws, None))
        }
    };
    let (ws, grid) = tokio::time::timeout(LIMIT, found)
        .await
        .map_err(|_| fail("it did not answer within 15 s".into()))?
        .map_err(fail)?;
    let config =
        chromiumoxide::handler::HandlerConfig { ignore_https_errors: false, ..Default::default() };
    let connected = tokio::time::timeout(LIMIT, Browser::connect_with_config(ws, config))
        .await
        .map_err(|_| fail("the connection did not open within 15 s (queued?)".into()))
        .and_then(|r| r.map_err(|e| fail(e.to_string())));
    match connected {
        Ok((b, h)) => {
            crate::nodelay::no_delay_to(b.websocket_address()).await;
            Ok((b, h, grid))
        }
        Err(e) => {
            if let Some(g) = grid {
                g.end().await;
            }
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_that_only_runs_a_binary_is_that_binary() -> std::io::Result<()> {
        let dir = std::env::temp_dir().join(format!("ochre-script-target-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let elf = dir.join("browser");
        std::fs::write(&elf, b"\x7fELF and the rest")?;
        let text = dir.join("text");
        std::fs::write(&text, "not a binary")?;
        let script = |name: &str, body: String| {
            let p = dir.join(name);
            std::fs::write(&p, body).map(|()| script_target(&p))
        };
        let e = elf.display();
        // Debian's chromium-headless-shell, and the same with exec.
        assert_eq!(script("a", format!("#!/bin/sh -e\n\n{e} \"$@\"\n"))?, Some(elf.clone()));
        assert_eq!(
            script("b", format!("#!/bin/sh\n# runs it\nexec {e} \"$@\""))?,
            Some(elf.clone())
        );
        // Anything more, or less, is left as it is.
        assert_eq!(script("c", format!("#!/bin/sh\nexport A=1\n{e} \"$@\"\n"))?, None);
        assert_eq!(script("d", format!("#!/bin/sh\n{e} --flag\n"))?, None);
        assert_eq!(script("e", format!("#!/bin/sh\n{e} $FLAGS \"$@\"\n"))?, None);
        assert_eq!(script("f", format!("#!/bin/sh\n{} \"$@\"\n", text.display()))?, None);
        assert_eq!(script("g", format!("{e} \"$@\"\n"))?, None);
        assert_eq!(script("h", "#!/bin/sh\nbrowser \"$@\"\n".into())?, None);
        assert_eq!(script_target(&elf), None);
        std::fs::remove_dir_all(&dir)
    }
}
