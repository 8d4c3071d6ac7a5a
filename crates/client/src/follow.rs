//! Following the event log: replay from a sequence, then wait for new events, gap-free.
//!
//! `event.since` is the only source of events here; the live `event.committed.*` messages only
//! wake the stream up. Core NATS may drop a message for a slow subscriber, but a dropped
//! wake-up costs at most a second (the stream also looks every second), never an event. A
//! harness may not watch `event.committed.*` (other agents' events): its streams look every
//! quarter second instead.

use crate::{Client, Result};
use futures::{FutureExt, StreamExt};
use relay_contracts::events::{Event, SinceRequest};
use relay_contracts::subjects;
use std::collections::VecDeque;
use std::time::Duration;

/// How long an idle stream waits for a wake-up before it looks anyway.
const IDLE_POLL: Duration = Duration::from_secs(1);
/// How often a harness's stream looks, with no wake-ups to wait for.
const HARNESS_POLL: Duration = Duration::from_millis(250);

pub struct EventStream {
    client: Client,
    filter: SinceRequest,
    /// `None` in a harness.
    wake: Option<async_nats::Subscriber>,
    ready: VecDeque<Event>,
    head_seq: i64,
}

impl EventStream {
    pub(crate) async fn start(client: Client, filter: SinceRequest) -> Result<EventStream> {
        // Subscribed before the first read: nothing committed after it goes unnoticed.
        let subject = match filter.types.as_deref() {
            Some([one]) => subjects::event::committed_subject(one),
            _ => subjects::event::committed_subject(">"),
        };
        let wake = match relay_bus::context::harness() {
            Some(_) => None,
            None => Some(client.nats().subscribe(subject).await.map_err(|e| {
                relay_contracts::WireError::new(relay_contracts::ErrorCode::Unavailable, e.to_string())
            })?),
        };
        Ok(EventStream {
            client,
            filter,
            wake,
            ready: VecDeque::new(),
            head_seq: 0,
        })
    }

    /// The next matching event, waiting for one to be committed if need be.
    pub async fn next(&mut self) -> Result<Event> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Ok(event);
            }
            if !self.read_page().await? {
                self.wait().await;
            }
        }
    }

    /// The next event if one comes within `timeout`.
    pub async fn next_within(&mut self, timeout: Duration) -> Result<Option<Event>> {
        match tokio::time::timeout(timeout, self.next()).await {
            Ok(event) => event.map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Where the stream stands: every matching event up to here has been returned or is queued.
    pub fn cursor(&self) -> i64 {
        self.filter.seq
    }

    /// The log's head at the last read, for progress while replaying.
    pub fn head_seq(&self) -> i64 {
        self.head_seq
    }

    /// Whether the stream has read up to the head it last saw (replay is over).
    pub fn caught_up(&self) -> bool {
        self.ready.is_empty() && self.filter.seq >= self.head_seq
    }

    /// Reads one page after the cursor; false when it held nothing.
    async fn read_page(&mut self) -> Result<bool> {
        let page = self.client.event_since(&self.filter).await?;
        self.filter.seq = page.next_seq.max(self.filter.seq);
        self.head_seq = page.head_seq;
        let found = !page.events.is_empty();
        self.ready.extend(page.events);
        Ok(found)
    }

    /// Until something is committed (or a second passes); wake-ups already queued are one.
    async fn wait(&mut self) {
        let Some(wake) = &mut self.wake else {
            return tokio::time::sleep(HARNESS_POLL).await;
        };
        let _ = tokio::time::timeout(IDLE_POLL, wake.next()).await;
        while let Some(Some(_)) = wake.next().now_or_never() {}
    }
}
