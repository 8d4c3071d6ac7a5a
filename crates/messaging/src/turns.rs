//! Sends to one conversation queue here, in the process, before they take a database
//! connection. They are serialised by the conversation's lock in the database (so across
//! replicas), but a send waiting there holds a pooled connection: a burst to one conversation
//! would hold every connection of the registry waiting, and its receipts and hand-overs, which
//! need one each, would stall behind them. Two sends of a conversation go on at a time: one
//! holds the database lock, the next waits for it with its transaction begun, so it starts the
//! moment the first commits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Sends of one conversation holding a connection at once.
const AT_ONCE: usize = 2;

/// Each conversation with a send in it or waiting, by key; an entry goes with its last turn.
#[derive(Clone, Default)]
pub struct Conversations(Arc<Mutex<HashMap<String, Arc<Semaphore>>>>);

/// This send's turn in its conversation, until dropped.
pub struct Turn {
    key: String,
    conversations: Conversations,
    permit: Option<OwnedSemaphorePermit>,
}

impl Conversations {
    /// Waits for the turn of `key`: fewer than [`AT_ONCE`] sends before it in this process are
    /// still going on.
    pub async fn turn(&self, key: String) -> Turn {
        let queue = {
            let mut all = self.0.lock().expect("conversations");
            all.entry(key.clone())
                .or_insert_with(|| Arc::new(Semaphore::new(AT_ONCE)))
                .clone()
        };
        let permit = queue
            .acquire_owned()
            .await
            .expect("a conversation's queue is never closed");
        Turn {
            key,
            conversations: self.clone(),
            permit: Some(permit),
        }
    }

    /// Conversations with a send in them or waiting.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.lock().expect("conversations").len()
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut all = self.conversations.0.lock().expect("conversations");
        // Held by the map and this turn's permit only: nobody else is in it or waits, so the
        // entry goes. Others clone it under the map's lock, held here, so none arrive meanwhile.
        if all.get(&self.key).is_some_and(|queue| Arc::strong_count(queue) == 2) {
            all.remove(&self.key);
        }
        self.permit.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn two_sends_of_a_conversation_go_on_at_once_a_third_waits_and_others_go_meanwhile() {
        let conversations = Conversations::default();
        let first = conversations.turn("a".into()).await;
        let second = tokio::time::timeout(Duration::from_secs(5), conversations.turn("a".into()))
            .await
            .expect("the next send waits at the database lock, not here");
        let third = tokio::spawn({
            let c = conversations.clone();
            async move { c.turn("a".into()).await }
        });
        // Another conversation is not held up.
        let other = tokio::time::timeout(Duration::from_secs(5), conversations.turn("b".into()))
            .await
            .expect("another conversation's turn comes at once");
        drop(other);
        assert!(!third.is_finished(), "a third send to `a` waits for the first");
        drop(first);
        let third = tokio::time::timeout(Duration::from_secs(5), third)
            .await
            .expect("the third send's turn comes once the first is done")
            .unwrap();
        drop(second);
        assert_eq!(conversations.len(), 1, "`a` is still in use");
        drop(third);
        assert_eq!(conversations.len(), 0, "a conversation nobody sends to is forgotten");
    }
}
