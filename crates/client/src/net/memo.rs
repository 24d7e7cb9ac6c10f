//! One fetch per URL per run: concurrent callers of the same key share the first result.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use super::error::NetError;

/// The shared slot of one key: filled once by whichever caller came first.
type Cell<T> = Arc<OnceCell<Result<T, NetError>>>;

pub(super) struct Memo<T> {
    cells: Mutex<HashMap<String, Cell<T>>>,
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Self {
            cells: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Clone> Memo<T> {
    /// The result for `key`, running `fetch` only if no caller has started it yet.
    pub(super) async fn once(
        &self,
        key: &str,
        fetch: impl Future<Output = Result<T, NetError>>,
    ) -> Result<T, NetError> {
        let cell = self
            .cells
            .lock()
            .expect("memo table")
            .entry(key.to_string())
            .or_default()
            .clone();
        cell.get_or_init(|| fetch).await.clone()
    }
}
