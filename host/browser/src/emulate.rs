//! Emulation (`emulate`, `network_conditions`): a device (viewport, scale,
//! touch, user agent), a place (locale, timezone, geolocation), preferences
//! (colour scheme, reduced motion) and a slower machine (network, CPU), on one
//! tab or on every tab of the caller's session: the open ones, and each tab the
//! session opens later (its own, isolated ones, popups) before its first
//! document loads.
//!
//! A call is checked whole before anything changes; the values Chromium alone
//! can judge (a locale, a timezone) are set first, so a refused one leaves the
//! tab as it was. What is emulated is kept per tab (`Tab::emulation`) and per
//! owner (`Inner::emulations`), so that an answer says what is in force.

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use serde_json::json;

use ochre_protocol::ToolError;
use ochre_protocol::page_ops::{self, Emulate, Emulated};

use super::{BrowserManager, Owner, TabId, owner, raw_command};

/// A network preset: (offline, latency ms, download and upload bytes/s; -1 is
/// no limit). The 3G values are Chrome DevTools' presets.
pub(super) fn preset(name: &str) -> Option<(bool, f64, f64, f64)> {
    Some(match name {
        "offline" => (true, 0.0, 0.0, 0.0),
        "slow-3g" => (false, 2000.0, 50_000.0, 50_000.0),
        "fast-3g" => (false, 562.5, 180_000.0, 84_375.0),
        "4g" => (false, 60.0, 2_500_000.0, 1_250_000.0),
        "no-throttling" | "none" => (false, 0.0, -1.0, -1.0),
        _ => return None,
    })
}

/// `e`'s fields checked, its device spelled out (the fields given beside it
/// win), before anything is changed.
pub(super) fn checked(e: &Emulate) -> Result<Emulate, ToolError> {
    let bad = |field: &str, why: String| Err(ToolError::invalid_argument(field, why));
    let mut out = e.clone();
    if let Some(s) = e.scope.as_deref()
        && !matches!(s, "tab" | "session")
    {
        return bad("scope", format!("scope {s:?} is not tab or session"));
    }
    out.scope = None;
    out.reset = None;
    if let Some(name) = e.device.as_deref() {
        let Some(d) = page_ops::device(name) else {
            let known: Vec<&str> = page_ops::DEVICES.iter().map(|d| d.name).collect();
            return bad("device", format!("unknown device {name:?}: one of {}", known.join(", ")));
        };
        out.device = Some(d.name.to_owned());
        out.width = out.width.or(Some(d.width));
        out.height = out.height.or(Some(d.height));
        out.scale = out.scale.or(Some(d.scale));
        out.mobile = out.mobile.or(Some(d.mobile));
        out.user_agent = out.user_agent.or(d.user_agent.map(str::to_owned));
    }
    for (field, v) in [("width", out.width), ("height", out.height)] {
        if let Some(v) = v
            && !(1..=10_000).contains(&v)
        {
            return bad(field, format!("{field} is 1 to 10000 CSS pixels, not {v}"));
        }
    }
    if let Some(s) = out.scale
        && !(0.25..=10.0).contains(&s)
    {
        return bad("scale", format!("scale is 0.25 to 10, not {s}"));
    }
    if let Some(ua) = out.user_agent.as_deref()
        && (ua.trim().is_empty() || ua.len() > 1_000 || ua.chars().any(char::is_control))
    {
        return bad("user_agent", "user_agent is 1 to 1000 characters on one line".into());
    }
    let word = |v: &str, extra: &[char], max: usize| {
        !v.is_empty()
            && v.len() <= max
            && v.chars().all(|c| c.is_ascii_alphanumeric() || extra.contains(&c))
    };
    if let Some(l) = out.locale.as_deref()
        && !word(l, &['-', '_'], 35)
    {
        return bad("locale", format!("{l:?} is not a locale (such as en-US or de-DE)"));
    }
    if let Some(t) = out.timezone.as_deref()
        && !word(t, &['/', '_', '-', '+'], 64)
    {
        return bad("timezone", format!("{t:?} is not a time zone (such as Europe/Paris)"));
    }
    if let Some(g) = out.geolocation {
        if !(-90.0..=90.0).contains(&g.latitude) {
            return bad("geolocation", format!("latitude {} is not -90 to 90", g.latitude));
        }
        if !(-180.0..=180.0).contains(&g.longitude) {
            return bad("geolocation", format!("longitude {} is not -180 to 180", g.longitude));
        }
        if g.accuracy.is_some_and(|a| !(0.0..=1e7).contains(&a)) {
            return bad("geolocation", "accuracy is 0 to 10000000 metres".into());
        }
    }
    if let Some(c) = out.color_scheme.as_deref()
        && !matches!(c, "light" | "dark" | "no-preference")
    {
        return bad("color_scheme", format!("{c:?} is not light, dark or no-preference"));
    }
    if let Some(m) = out.reduced_motion.as_deref()
        && !matches!(m, "reduce" | "no-preference")
    {
        return bad("reduced_motion", format!("{m:?} is not reduce or no-preference"));
    }
    if let Some(n) = out.network.as_deref()
        && preset(n).is_none()
    {
        return bad(
            "network",
            format!("unknown network {n:?}: offline, slow-3g, fast-3g, 4g or no-throttling"),
        );
    }
    if let Some(c) = out.cpu_slowdown
        && !(1.0..=20.0).contains(&c)
    {
        return bad("cpu_slowdown", format!("cpu_slowdown is 1 to 20, not {c}"));
    }
    if out == Emulate::default() && e.reset != Some(true) {
        return bad("device", "emulate needs something to emulate, or reset".into());
    }
    Ok(out)
}

/// `over` laid over `base`: each field `over` sets wins.
fn merged(base: &Emulate, over: &Emulate) -> Emulate {
    macro_rules! pick {
        ($($f:ident),*) => { Emulate { $($f: over.$f.clone().or_else(|| base.$f.clone()),)* } };
    }
    pick!(
        scope,
        reset,
        device,
        width,
        height,
        scale,
        mobile,
        user_agent,
        locale,
        timezone,
        geolocation,
        color_scheme,
        reduced_motion,
        network,
        cpu_slowdown
    )
}

impl BrowserManager {
    /// `emulate`: on tab `n` (`page`), or on every open tab of the caller's
    /// session and each it opens later.
    pub(super) async fn emulate(
        &self,
        n: TabId,
        page: &Page,
        e: &Emulate,
    ) -> Result<Emulated, ToolError> {
        let change = checked(e)?;
        let reset = e.reset == Some(true);
        if e.scope.as_deref() != Some("session") {
            let now = self.emulate_tab(n, page, &change, reset).await?;
            return Ok(Emulated { scope: "tab".into(), tabs: vec![n.to_string()], emulating: now });
        }
        let who = owner();
        // The tab named first: a value Chromium refuses is refused before any
        // other tab changed.
        self.emulate_tab(n, page, &change, reset).await?;
        let mut tabs = vec![n.to_string()];
        let slots = 0..self.pool_size();
        let others: Vec<(TabId, Page)> = slots
            .flat_map(|slot| self.inner.tabs.pages_in(slot, Some(&who)))
            .filter(|(m, _)| *m != n)
            .collect();
        for (m, p) in others {
            // A tab that closed meanwhile is not one of the session's any more.
            if self.emulate_tab(m, &p, &change, reset).await.is_ok() {
                tabs.push(m.to_string());
            }
        }
        let now = self.inner.owners.write(&who, |s| {
            let before =
                if reset { Emulate::default() } else { s.emulation.take().unwrap_or_default() };
            let now = merged(&before, &change);
            // Nothing emulated: new tabs open as they would without.
            if now != Emulate::default() {
                s.emulation = Some(now.clone());
            }
            now
        });
        Ok(Emulated { scope: "session".into(), tabs, emulating: now })
    }

    /// `network_conditions` {preset, cpu_slowdown}: the network and CPU part of
    /// `emulate` on one tab, answered as before (what the preset means).
    pub(super) async fn network_conditions(
        &self,
        n: TabId,
        page: &Page,
        args: &page_ops::NetworkConditions,
    ) -> Result<page_ops::NetworkApplied, ToolError> {
        let e = Emulate {
            network: args.preset.clone(),
            cpu_slowdown: args.cpu_slowdown,
            ..Emulate::default()
        };
        let change = checked(&e).map_err(|mut err| {
            if err.details.get("field") == Some(&json!("network")) {
                err.details.insert("field".into(), json!("preset"));
            }
            err
        })?;
        self.emulate_tab(n, page, &change, false).await?;
        let mut out =
            page_ops::NetworkApplied { cpu_slowdown: args.cpu_slowdown, ..Default::default() };
        if let Some(name) = args.preset.as_deref()
            && let Some((offline, latency, down, up)) = preset(name)
        {
            out.preset = Some(name.to_owned());
            out.offline = Some(offline);
            out.latency_ms = Some(latency);
            out.download_bps = Some(down);
            out.upload_bps = Some(up);
        }
        Ok(out)
    }

    /// Where a new tab of `who` for `url` opens: at `about:blank` when its
    /// session emulates something or captures its network, so that its first
    /// document is emulated and captured too ([`Self::emulate_new_tab`] then
    /// goes on to `url`).
    pub(super) fn first_url<'u>(&self, who: &Owner, url: &'u str) -> &'u str {
        let before = |s: &super::owners::OwnerState| {
            s.emulation.is_some() || s.capture.as_ref().is_some_and(|c| c.on())
        };
        match self.inner.owners.read(who, before).unwrap_or(false) {
            true => "about:blank",
            false => url,
        }
    }

    /// A new tab `n` of `who` takes its session's emulation, if it has one;
    /// then, if it was opened at `about:blank` for that (`first_url`), it
    /// goes to `url`. A popup is emulated as soon as it is known.
    pub(super) fn emulate_new_tab<'a>(
        &'a self,
        n: TabId,
        page: &'a Page,
        who: &Owner,
        url: Option<&'a str>,
    ) -> futures::future::BoxFuture<'a, ()> {
        // Boxed: popups are adopted from a task the browser's start spawns.
        let e = self.session_emulation(who);
        Box::pin(self.emulate_new_tab_with(n, page, e, url))
    }

    async fn emulate_new_tab_with(
        &self,
        n: TabId,
        page: &Page,
        e: Option<Emulate>,
        url: Option<&str>,
    ) {
        if let Some(e) = e
            && let Err(err) = self.emulate_tab(n, page, &e, false).await
        {
            tracing::warn!(tab = %n, error = %err.message, "a new tab did not take its session's emulation");
        }
        // Then its first page, loaded as a tab opened at it is.
        if let Some(url) = url.filter(|u| *u != "about:blank") {
            let went = match raw_command(page, "Page.navigate", json!({"url": url})).await {
                Ok(_) => self.wait_loaded(page, 30_000).await,
                Err(e) => Err(e),
            };
            if let Err(err) = went {
                tracing::warn!(tab = %n, error = %err.message, "a new tab did not load its first page");
            }
        }
    }

    /// What `who`'s session emulates on every tab (`None`: nothing).
    pub(super) fn session_emulation(&self, who: &Owner) -> Option<Emulate> {
        self.inner.owners.read(who, |s| s.emulation.clone()).flatten()
    }

    /// The viewport, scale and touch `change` sets (`now`: all the tab
    /// emulates with it), or, on `reset`, the tab's own again.
    async fn set_metrics(
        page: &Page,
        change: &Emulate,
        now: &Emulate,
        reset: bool,
    ) -> Result<(), ToolError> {
        let metrics = change.width.is_some()
            || change.height.is_some()
            || change.scale.is_some()
            || change.mobile.is_some();
        if metrics {
            let mobile = now.mobile.unwrap_or(false);
            // What is not given stays as the tab has it: 0 is the window's
            // size, which is the tab's own viewport (a launched browser sizes
            // each tab's window for its pages; an attached one's are its own).
            raw_command(
                page,
                "Emulation.setDeviceMetricsOverride",
                json!({
                    "width": now.width.unwrap_or(0),
                    "height": now.height.unwrap_or(0),
                    "deviceScaleFactor": now.scale.unwrap_or(0.0),
                    "mobile": mobile,
                }),
            )
            .await?;
            let touch = json!({"enabled": mobile, "maxTouchPoints": if mobile { 5 } else { 1 }});
            raw_command(page, "Emulation.setTouchEmulationEnabled", touch).await?;
        } else if reset {
            // The window's viewport and scale again.
            raw_command(page, "Emulation.clearDeviceMetricsOverride", json!({})).await?;
            let touch = json!({"enabled": false});
            raw_command(page, "Emulation.setTouchEmulationEnabled", touch).await?;
        }
        Ok(())
    }

    /// Set `change` on tab `n` (after going back to the browser's own for
    /// everything when `reset`); what the tab emulates now.
    async fn emulate_tab(
        &self,
        n: TabId,
        page: &Page,
        change: &Emulate,
        reset: bool,
    ) -> Result<Emulate, ToolError> {
        let before = match reset {
            true => Emulate::default(),
            false => self.inner.tabs.with(n, |t| t.emulation.clone()).flatten().unwrap_or_default(),
        };
        let now = merged(&before, change);
        // Chromium judges these two: set first, so that a refusal changes nothing.
        if let Some(t) = change.timezone.as_deref() {
            raw_command(page, "Emulation.setTimezoneOverride", json!({"timezoneId": t}))
                .await
                .map_err(|e| refused("timezone", t, e))?;
        } else if reset {
            let _ =
                raw_command(page, "Emulation.setTimezoneOverride", json!({"timezoneId": ""})).await;
        }
        if let Some(l) = change.locale.as_deref() {
            raw_command(page, "Emulation.setLocaleOverride", json!({"locale": l}))
                .await
                .map_err(|e| refused("locale", l, e))?;
        } else if reset {
            raw_command(page, "Emulation.setLocaleOverride", json!({})).await?;
        }
        Self::set_metrics(page, change, &now, reset).await?;
        if change.user_agent.is_some() || change.locale.is_some() || reset {
            // The header's language follows the locale; the user agent stays
            // the browser's own unless one is given.
            let ua = match now.user_agent.clone() {
                Some(ua) => ua,
                None => self.own_user_agent(n).await?,
            };
            let language = now.locale.clone().unwrap_or_default();
            let params = json!({"userAgent": ua, "acceptLanguage": language});
            raw_command(page, "Emulation.setUserAgentOverride", params).await?;
        }
        if let Some(g) = change.geolocation {
            let accuracy = g.accuracy.unwrap_or(10.0);
            let at =
                json!({"latitude": g.latitude, "longitude": g.longitude, "accuracy": accuracy});
            raw_command(page, "Emulation.setGeolocationOverride", at).await?;
            self.grant_geolocation(n).await?;
        } else if reset {
            raw_command(page, "Emulation.clearGeolocationOverride", json!({})).await?;
        }
        if change.color_scheme.is_some() || change.reduced_motion.is_some() || reset {
            let mut features = Vec::new();
            if let Some(c) = &now.color_scheme {
                features.push(json!({"name": "prefers-color-scheme", "value": c}));
            }
            if let Some(m) = &now.reduced_motion {
                features.push(json!({"name": "prefers-reduced-motion", "value": m}));
            }
            let media = json!({"media": "", "features": features});
            raw_command(page, "Emulation.setEmulatedMedia", media).await?;
        }
        let network = change.network.as_deref().or(reset.then_some("no-throttling"));
        if let Some((offline, latency, down, up)) = network.and_then(preset) {
            raw_command(
                page,
                "Network.emulateNetworkConditions",
                json!({"offline": offline, "latency": latency, "downloadThroughput": down, "uploadThroughput": up}),
            )
            .await?;
        }
        if let Some(rate) = change.cpu_slowdown.or(reset.then_some(1.0)) {
            raw_command(page, "Emulation.setCPUThrottlingRate", json!({"rate": rate})).await?;
        }
        let kept = (now != Emulate::default()).then(|| now.clone());
        self.inner.tabs.with(n, |t| t.emulation = kept);
        Ok(now)
    }

    /// The user agent of tab `n`'s browser, as it is without emulation.
    async fn own_user_agent(&self, n: TabId) -> Result<String, ToolError> {
        let browser = self
            .browser_of(self.slot_of_tab(n))
            .await
            .ok_or_else(|| ToolError::browser_unavailable("the browser is gone"))?;
        let v = browser.version().await.map_err(|e| super::cdp_error("Browser.getVersion", e))?;
        Ok(v.user_agent)
    }

    /// Let the pages of tab `n`'s browser context read the (emulated) position.
    async fn grant_geolocation(&self, n: TabId) -> Result<(), ToolError> {
        let slot = self.slot_of_tab(n);
        let known = self.inner.tabs.with(n, |t| (t.context.clone(), t.owner.clone()));
        let context: Option<BrowserContextId> = match known {
            Some((Some(own), _)) => Some(own),
            Some((None, owner @ Some(_))) => {
                let guard = self.slot(slot).session.lock().await;
                guard.as_ref().and_then(|s| s.context_of(&owner))
            }
            _ => None,
        };
        let browser = self
            .browser_of(slot)
            .await
            .ok_or_else(|| ToolError::browser_unavailable("the browser is gone"))?;
        let mut params = json!({"permissions": ["geolocation"]});
        if let Some(c) = context {
            params["browserContextId"] = json!(c.inner());
        }
        let cmd =
            super::RawCommand { method: "Browser.grantPermissions".to_owned().into(), params };
        super::bounded(10_000, "Browser.grantPermissions", async {
            browser
                .execute(cmd)
                .await
                .map(drop)
                .map_err(|e| super::cdp_error("Browser.grantPermissions", e))
        })
        .await
    }
}

/// A value Chromium refused, said as the argument's fault.
fn refused(field: &str, value: &str, e: ToolError) -> ToolError {
    ToolError::invalid_argument(
        field,
        format!("the browser refuses {field} {value:?}: {}", e.message),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_checked_whole_and_a_device_spelled_out() {
        let e =
            Emulate { device: Some("iPhone 15".into()), width: Some(500), ..Default::default() };
        let c = checked(&e).expect("a known device");
        assert_eq!((c.width, c.height, c.mobile), (Some(500), Some(852), Some(true)));
        assert_eq!(c.device.as_deref(), Some("iphone-15"));
        assert!(c.user_agent.as_deref().is_some_and(|u| u.contains("iPhone")));
        let field = |e: Emulate| {
            let err = checked(&e).expect_err("refused");
            err.details["field"].as_str().unwrap_or_default().to_owned()
        };
        assert_eq!(field(Emulate::default()), "device");
        assert_eq!(field(Emulate { device: Some("nokia".into()), ..Default::default() }), "device");
        assert_eq!(field(Emulate { width: Some(0), ..Default::default() }), "width");
        assert_eq!(field(Emulate { locale: Some("de DE".into()), ..Default::default() }), "locale");
        let far = page_ops::Geolocation { latitude: 91.0, longitude: 0.0, accuracy: None };
        assert_eq!(field(Emulate { geolocation: Some(far), ..Default::default() }), "geolocation");
        assert_eq!(field(Emulate { network: Some("5g".into()), ..Default::default() }), "network");
        assert_eq!(
            field(Emulate { cpu_slowdown: Some(0.5), ..Default::default() }),
            "cpu_slowdown"
        );
        let scope =
            Emulate { scope: Some("all".into()), locale: Some("fr".into()), ..Default::default() };
        assert_eq!(field(scope), "scope");
        assert!(checked(&Emulate { reset: Some(true), ..Default::default() }).is_ok());
    }

    #[test]
    fn what_a_call_sets_lies_over_what_was_set() {
        let before =
            Emulate { locale: Some("de-DE".into()), width: Some(400), ..Default::default() };
        let over = Emulate {
            locale: Some("fr-FR".into()),
            timezone: Some("Asia/Tokyo".into()),
            ..Default::default()
        };
        let now = merged(&before, &over);
        assert_eq!(now.locale.as_deref(), Some("fr-FR"));
        assert_eq!(now.width, Some(400));
        assert_eq!(now.timezone.as_deref(), Some("Asia/Tokyo"));
    }
}
