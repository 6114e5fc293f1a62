//! One keyed cache for everything a backend builds once per ring, parameter set or
//! preset (NTT engines, prepared tables, base converters). It replaces fixed arrays
//! indexed by a set's position, so a new set or an unforeseen ring is a new key, never an
//! out-of-bounds index.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, RwLock};

use crate::error::Result;

/// A map from key to a value built on first use and shared afterwards. Readers take a
/// shared lock; a miss builds the value outside any lock (two threads may build the same
/// value once each; the first insert wins, so every caller sees one value).
pub struct KeyedCache<K, V> {
    map: RwLock<HashMap<K, Arc<V>>>,
}

impl<K, V> Default for KeyedCache<K, V> {
    fn default() -> Self {
        KeyedCache { map: RwLock::new(HashMap::new()) }
    }
}

impl<K: std::fmt::Debug, V> std::fmt::Debug for KeyedCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let map = self.map.read().unwrap_or_else(|e| e.into_inner());
        f.debug_struct("KeyedCache").field("keys", &map.keys().collect::<Vec<_>>()).finish()
    }
}

impl<K: Eq + Hash + Clone, V> KeyedCache<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The value for `key`, built by `init` on first use; an `init` error is returned and
    /// nothing is cached, so a later call may try again.
    pub fn get_or_try_init(&self, key: &K, init: impl FnOnce() -> Result<V>) -> Result<Arc<V>> {
        // A poisoned lock only means another thread panicked while holding it; the map
        // itself is always consistent (inserts are single calls).
        if let Some(v) = self.map.read().unwrap_or_else(|e| e.into_inner()).get(key) {
            return Ok(v.clone());
        }
        let built = Arc::new(init()?);
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        Ok(map.entry(key.clone()).or_insert(built).clone())
    }

    /// [`KeyedCache::get_or_try_init`] for an infallible `init`.
    pub fn get_or_init(&self, key: &K, init: impl FnOnce() -> V) -> Arc<V> {
        match self.get_or_try_init(key, || Ok(init())) {
            Ok(v) => v,
            Err(_) => unreachable!("an infallible init"),
        }
    }

    /// Number of cached values.
    pub fn len(&self) -> usize {
        self.map.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every cached value (callers holding one keep theirs); the next use builds
    /// again.
    pub fn clear(&self) {
        let old = std::mem::take(&mut *self.map.write().unwrap_or_else(|e| e.into_inner()));
        drop(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn builds_once_and_retries_after_an_error() {
        let cache: KeyedCache<(usize, u64), String> = KeyedCache::new();
        let a = cache.get_or_init(&(1, 2), || "a".into());
        let again = cache.get_or_init(&(1, 2), || unreachable!("cached"));
        assert!(Arc::ptr_eq(&a, &again));
        let e = cache.get_or_try_init(&(9, 9), || Err(Error::InvalidRing("no".into())));
        assert!(e.is_err());
        assert_eq!(cache.len(), 1);
        assert_eq!(*cache.get_or_try_init(&(9, 9), || Ok("b".into())).unwrap(), "b");
        // Any number of keys: no fixed slots to run past.
        for k in 0..100 {
            cache.get_or_init(&(k, 0), || k.to_string());
        }
        assert_eq!(cache.len(), 102);
        cache.clear();
        assert!(cache.is_empty());
        assert!(!Arc::ptr_eq(&a, &cache.get_or_init(&(1, 2), || "a".into())), "built again");
    }
}
