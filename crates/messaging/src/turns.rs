//! Sends to one conversation take turns here, in the process, before they take a database
//! connection. They are serialised by the conversation's lock in the database too (so across
//! replicas), but a send waiting there holds a pooled connection: a burst to one conversation
//! would hold every connection of the registry waiting, and its receipts and hand-overs, which
//! need one each, would stall behind them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// Each conversation with a send in it or waiting, by key; an entry goes with its last turn.
#[derive(Clone, Default)]
pub struct Conversations(Arc<Mutex<HashMap<String, Arc<AsyncMutex<()>>>>>);

/// This send's turn in its conversation, until dropped.
pub struct Turn {
    key: String,
    conversations: Conversations,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Conversations {
    /// Waits for the turn of `key` (the sends before it in this process have finished).
    pub async fn turn(&self, key: String) -> Turn {
        let lock = {
            let mut all = self.0.lock().expect("conversations");
            all.entry(key.clone()).or_default().clone()
        };
        let guard = lock.lock_owned().await;
        Turn {
            key,
            conversations: self.clone(),
            guard: Some(guard),
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
        // Held by the map and this turn's guard only: nobody waits, so the entry goes. Waiters
        // clone it under the map's lock, held here, so none can arrive meanwhile.
        if all.get(&self.key).is_some_and(|lock| Arc::strong_count(lock) == 2) {
            all.remove(&self.key);
        }
        self.guard.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn sends_to_one_conversation_take_turns_and_others_go_meanwhile() {
        let conversations = Conversations::default();
        let first = conversations.turn("a".into()).await;
        let waiting = tokio::spawn({
            let c = conversations.clone();
            async move { c.turn("a".into()).await }
        });
        // Another conversation is not held up.
        let other = tokio::time::timeout(Duration::from_secs(5), conversations.turn("b".into()))
            .await
            .expect("another conversation's turn comes at once");
        drop(other);
        assert!(!waiting.is_finished(), "the second send to `a` waits for the first");
        drop(first);
        let second = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the second send's turn comes once the first is done")
            .unwrap();
        assert_eq!(conversations.len(), 1, "`a` is still in use");
        drop(second);
        assert_eq!(conversations.len(), 0, "a conversation nobody sends to is forgotten");
    }
}
