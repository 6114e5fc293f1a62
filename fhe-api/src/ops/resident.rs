//! One shape for every object a backend keeps in its own form (a prepared bit-scheme
//! key, a CKKS ciphertext, plaintext or switching key): the metadata the host needs, on
//! the host, and the words wherever the backend keeps them (host memory on the CPU,
//! device buffers on a GPU).

use std::any::Any;
use std::ops::Deref;

use crate::error::{Error, Result};

/// A backend-owned object: metadata `M` on the host, the backend's own form inside.
/// Only the backend that made it can read it ([`Resident::downcast`]); the metadata is
/// readable by anyone through `Deref` (`handle.level()`, `key.tag()`).
pub struct Resident<M> {
    owner: String,
    meta: M,
    inner: Box<dyn Any + Send + Sync>,
}

impl<M> Resident<M> {
    /// `inner`, made by backend `owner` (its [`crate::Backend::name`]), described by `meta`.
    pub fn new<T: Any + Send + Sync>(owner: String, meta: M, inner: T) -> Self {
        Resident { owner, meta, inner: Box::new(inner) }
    }

    pub fn meta(&self) -> &M {
        &self.meta
    }

    /// The name of the backend that made it.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The backend's own form; `Error::WrongBackend` when another backend made it (one
    /// rule for every resident type).
    pub fn downcast<T: Any>(&self, user: &str) -> Result<&T> {
        self.inner
            .downcast_ref::<T>()
            .filter(|_| self.owner == user)
            .ok_or_else(|| Error::WrongBackend { owner: self.owner.clone(), used: user.to_string() })
    }
}

impl<M> Deref for Resident<M> {
    type Target = M;
    fn deref(&self) -> &M {
        &self.meta
    }
}

impl<M: std::fmt::Debug> std::fmt::Debug for Resident<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} on {}", self.meta, self.owner)
    }
}
