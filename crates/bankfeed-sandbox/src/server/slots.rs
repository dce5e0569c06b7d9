//! The open connections of a sandbox, and which one gives its place to a newcomer when all
//! `max_connections` places are taken (docs/sandbox.md#making-room).
//!
//! The accept loop used to wait for a connection to close before it took the next one, so a
//! client holding every place (1,024 uploads sent a byte at a time, say) kept everyone else
//! waiting in the kernel's queue until its own connections timed out. Now a newcomer takes the
//! place of the connection that has gone longest without being answered: one idle between
//! requests, or one still sending its request. A connection whose request is being answered is
//! never cut, and neither is one that has waited or read for less than [`GRACE`], so a client that
//! has just connected, or just been answered, has time to send its request.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use bankfeed::sync::lock;

/// How long a connection may wait for or read a request before a newcomer may take its place.
/// A client on loopback sends a whole request in milliseconds; a second also bounds how fast
/// connections can be cut, so a flood of connections does not cut each other in a loop.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// Where one connection stands, as its place is concerned.
pub(crate) struct Slot {
    /// Since when it has waited for a request (since it opened, or since its last answer) and
    /// read it; None while a request of it is answered.
    since: Mutex<Option<Instant>>,
    /// Set once, when the connection is to give its place up.
    cut: watch::Sender<bool>,
}

impl Slot {
    fn new(now: Instant) -> Slot {
        Slot { since: Mutex::new(Some(now)), cut: watch::Sender::new(false) }
    }

    /// Its request is read (or its answer ready): the connection keeps its place until it is
    /// answered.
    pub(crate) fn answering(&self) {
        *lock(&self.since) = None;
    }

    /// Its answer is sent: from now it waits for the next request.
    pub(crate) fn waiting(&self) {
        *lock(&self.since) = Some(Instant::now());
    }

    pub(crate) fn is_answering(&self) -> bool {
        lock(&self.since).is_none()
    }

    /// Completes when the connection is to give its place up.
    pub(crate) fn cut(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut cut = self.cut.subscribe();
        async move {
            let cut = cut.wait_for(|cut| *cut).await.is_ok();
            if !cut {
                // The slot is gone, and with it the connection: nothing to cut.
                std::future::pending::<()>().await;
            }
        }
    }
}

/// What [`Slots::make_room`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Room {
    /// A connection was told to give its place up; the place is free as soon as it closes.
    Cut,
    /// Every connection that could give its place up is within its [`GRACE`] until this moment.
    NotBefore(Instant),
    /// Every connection is being answered (or already cut).
    Nothing,
}

/// The open connections.
#[derive(Default)]
pub(crate) struct Slots {
    open: Mutex<HashMap<u64, Arc<Slot>>>,
    next: AtomicU64,
}

impl Slots {
    /// A new connection's place, given up when the returned value is dropped.
    pub(crate) fn open(self: &Arc<Self>) -> Place {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(Slot::new(Instant::now()));
        lock(&self.open).insert(id, Arc::clone(&slot));
        Place { slots: Arc::clone(self), id, slot }
    }

    /// Tells the connection that has gone longest without being answered, for at least
    /// [`GRACE`], to give its place up. A scan of every connection: it runs only when all places
    /// are taken and someone waits for one, at most once per connection cut.
    pub(crate) fn make_room(&self, now: Instant) -> Room {
        let open = lock(&self.open);
        let longest = open
            .values()
            .filter(|slot| !*slot.cut.borrow())
            .filter_map(|slot| {
                let since = *lock(&slot.since);
                since.map(|since| (since, slot))
            })
            .min_by_key(|(since, _)| *since);
        match longest {
            Some((since, slot)) if since + GRACE <= now => {
                slot.cut.send_replace(true);
                Room::Cut
            }
            Some((since, _)) => Room::NotBefore(since + GRACE),
            None => Room::Nothing,
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.open).len()
    }
}

/// A connection's place among the open ones.
pub(crate) struct Place {
    slots: Arc<Slots>,
    id: u64,
    slot: Arc<Slot>,
}

impl Place {
    pub(crate) fn slot(&self) -> &Arc<Slot> {
        &self.slot
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        lock(&self.slots.open).remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_connection_longest_unanswered_gives_its_place_up_after_the_grace() {
        let slots = Arc::new(Slots::default());
        let oldest = slots.open();
        tokio::time::advance(Duration::from_millis(300)).await;
        let newer = slots.open();
        let now = Instant::now();
        assert_eq!(slots.make_room(now), Room::NotBefore(now + GRACE - Duration::from_millis(300)));
        tokio::time::advance(GRACE).await;
        assert_eq!(slots.make_room(Instant::now()), Room::Cut);
        assert!(*oldest.slot().cut.borrow());
        assert!(!*newer.slot().cut.borrow());
        // A connection already cut is not counted again; the next one is.
        assert_eq!(slots.make_room(Instant::now()), Room::Cut);
        assert!(*newer.slot().cut.borrow());
        assert_eq!(slots.make_room(Instant::now()), Room::Nothing);
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_being_answered_keeps_its_place() {
        let slots = Arc::new(Slots::default());
        let answered = slots.open();
        let idle = slots.open();
        answered.slot().answering();
        tokio::time::advance(GRACE * 10).await;
        idle.slot().waiting();
        // The idle one was answered just now: within its grace, and the other is being answered.
        assert_eq!(slots.make_room(Instant::now()), Room::NotBefore(Instant::now() + GRACE));
        answered.slot().waiting();
        idle.slot().answering();
        assert_eq!(slots.make_room(Instant::now()), Room::NotBefore(Instant::now() + GRACE));
        tokio::time::advance(GRACE).await;
        assert_eq!(slots.make_room(Instant::now()), Room::Cut);
        assert!(*answered.slot().cut.borrow() && !*idle.slot().cut.borrow());
    }

    #[tokio::test(start_paused = true)]
    async fn a_cut_is_seen_by_every_waiter_and_a_closed_place_is_forgotten() {
        let slots = Arc::new(Slots::default());
        let place = slots.open();
        let (first, second) = (place.slot().cut(), place.slot().cut());
        tokio::time::advance(GRACE).await;
        assert_eq!(slots.make_room(Instant::now()), Room::Cut);
        tokio::time::timeout(Duration::from_secs(1), async { tokio::join!(first, second) }).await.unwrap();
        assert_eq!(slots.len(), 1);
        drop(place);
        assert_eq!(slots.len(), 0);
        assert_eq!(slots.make_room(Instant::now()), Room::Nothing);
    }
}
