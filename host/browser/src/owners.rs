//! Everything the browser manager keeps for one owner (an MCP session, or the
//! shared tabs' `None`), in one value: releasing an owner removes one entry,
//! and dropping it disposes of what it held (its policy proxy stops, its
//! fetcher pages go). Tabs are kept apart (see [`super::tabs`]), as are what a
//! browser of the pool holds per owner (its current tab and browser context:
//! gone with that browser when it relaunches).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chromiumoxide::Page;
use ochre_protocol::browser::StorageState;
use ochre_protocol::lock;
use ochre_protocol::page_ops::Emulate;

use super::Owner;
use super::netpolicy::OwnerNet;
use super::routes::OwnerRoutes;
use super::sessioncap::SessionCapture;

/// One owner's state.
#[derive(Default)]
pub(crate) struct OwnerState {
    /// The browser of the pool its tabs live in (see `BrowserManager::home`).
    pub placement: Option<usize>,
    /// The browser (slot, and how many times it had started) its last call
    /// saw: a change means its tabs are gone (see `take_relaunch_note`).
    pub seen: Option<(usize, u64)>,
    /// Per origin and browser: a worker tab at that origin that crawls fetch
    /// pages from.
    pub fetchers: HashMap<(String, usize), Page>,
    /// The login its new browser contexts start with (see `logins`).
    pub login: Option<Arc<StorageState>>,
    /// What its session emulates on every tab (see `emulate`).
    pub emulation: Option<Emulate>,
    /// Its network policy proxy and its own rules (see `netpolicy`).
    pub net: Option<OwnerNet>,
    /// The routes its tabs' requests pass by (see `routes`).
    pub routes: Option<OwnerRoutes>,
    /// The lock that makes its implicit first tab open once.
    pub opening: Option<Arc<tokio::sync::Mutex<()>>>,
    /// Its session-wide network capture (see `sessioncap`).
    pub capture: Option<SessionCapture>,
}

/// How many owners hold each piece (see [`super::StateSizes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OwnerSizes {
    pub owners: usize,
    pub placed: usize,
    pub seen: usize,
    pub fetchers: usize,
    pub logins: usize,
    pub emulations: usize,
    pub policed: usize,
    pub routed: usize,
    pub opening: usize,
    pub captures: usize,
}

/// Every owner's state.
#[derive(Default)]
pub(crate) struct Owners(Mutex<HashMap<Owner, OwnerState>>);

impl Owners {
    /// What `f` reads of `who`'s state (`None`: it has none).
    pub fn read<R>(&self, who: &Owner, f: impl FnOnce(&OwnerState) -> R) -> Option<R> {
        lock(&self.0).get(who).map(f)
    }

    /// Change `who`'s state (made when it has none).
    pub fn write<R>(&self, who: &Owner, f: impl FnOnce(&mut OwnerState) -> R) -> R {
        f(lock(&self.0).entry(who.clone()).or_default())
    }

    /// Change `who`'s state, if it has one (none is made).
    pub fn change<R>(&self, who: &Owner, f: impl FnOnce(&mut OwnerState) -> R) -> Option<R> {
        lock(&self.0).get_mut(who).map(f)
    }

    /// Change every owner's state.
    pub fn each(&self, mut f: impl FnMut(&Owner, &mut OwnerState)) {
        for (who, state) in lock(&self.0).iter_mut() {
            f(who, state);
        }
    }

    /// Forget `who`: its state is dropped once the lock is let go.
    pub fn remove(&self, who: &Owner) -> Option<OwnerState> {
        lock(&self.0).remove(who)
    }

    /// Place `who` on the browser `choose` picks given where the others are,
    /// under one lock (two first calls at once count each other).
    pub fn place<E>(
        &self,
        who: &Owner,
        choose: impl FnOnce(&HashMap<Owner, usize>) -> Result<usize, E>,
    ) -> Result<usize, E> {
        let mut all = lock(&self.0);
        let others: HashMap<Owner, usize> = (all.iter())
            .filter(|(w, _)| *w != who)
            .filter_map(|(w, s)| Some((w.clone(), s.placement?)))
            .collect();
        let i = choose(&others)?;
        all.entry(who.clone()).or_default().placement = Some(i);
        Ok(i)
    }

    /// Where each placed owner's tabs live.
    pub fn placements(&self) -> HashMap<Owner, usize> {
        (lock(&self.0).iter()).filter_map(|(who, s)| Some((who.clone(), s.placement?))).collect()
    }

    /// How many owners hold each piece.
    pub fn sizes(&self) -> OwnerSizes {
        let all = lock(&self.0);
        let count = |f: fn(&OwnerState) -> bool| all.values().filter(|s| f(s)).count();
        OwnerSizes {
            owners: all.len(),
            placed: count(|s| s.placement.is_some()),
            seen: count(|s| s.seen.is_some()),
            fetchers: all.values().map(|s| s.fetchers.len()).sum(),
            logins: count(|s| s.login.is_some()),
            emulations: count(|s| s.emulation.is_some()),
            policed: count(|s| s.net.is_some()),
            routed: count(|s| s.routes.as_ref().is_some_and(|r| !r.is_empty())),
            opening: count(|s| s.opening.is_some()),
            captures: count(|s| s.capture.is_some()),
        }
    }
}
