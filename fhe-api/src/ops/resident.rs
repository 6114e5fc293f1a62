//! One shape for every object a backend keeps in its own form (a prepared bit-scheme
//! key, a CKKS ciphertext, plaintext, switching key or hoisting precompute): the metadata
//! the host needs, on the host, and the words wherever the backend keeps them (host
//! memory on the CPU, device buffers on a GPU).

use std::any::Any;
use std::ops::Deref;
use std::sync::Arc;

use crate::error::{Error, Result};

/// A backend-owned object: metadata `M` on the host, the backend's own form inside.
/// Only the backend that made it can read it ([`Resident::downcast`]); the metadata is
/// readable by anyone through `Deref` (`handle.level()`, `key.tag()`). Cloning shares
/// the backend's form: a clone costs no copy, and an in-place operation on a shared
/// object leaves the other clones as they were ([`Resident::downcast_mut`]).
pub struct Resident<M> {
    owner: String,
    meta: M,
    inner: Arc<dyn Any + Send + Sync>,
}

impl<M: Clone> Clone for Resident<M> {
    fn clone(&self) -> Self {
        Resident { owner: self.owner.clone(), meta: self.meta.clone(), inner: self.inner.clone() }
    }
}

impl<M> Resident<M> {
    /// `inner`, made by backend `owner` (its [`crate::Backend::name`]), described by `meta`.
    pub fn new<T: Any + Send + Sync>(owner: String, meta: M, inner: T) -> Self {
        Resident { owner, meta, inner: Arc::new(inner) }
    }

    pub fn meta(&self) -> &M {
        &self.meta
    }

    /// Replaces the metadata (an in-place operation that changed the object's scale).
    pub fn set_meta(&mut self, meta: M) {
        self.meta = meta;
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

    /// The backend's own form to change in place: `Ok(None)` when a clone shares it
    /// (the backend then writes a new form with [`Resident::replace`]).
    pub fn downcast_mut<T: Any>(&mut self, user: &str) -> Result<Option<&mut T>> {
        self.downcast::<T>(user)?;
        Ok(Arc::get_mut(&mut self.inner).and_then(|x| x.downcast_mut::<T>()))
    }

    /// A new backend form in place of the old one (which its other clones keep).
    pub fn replace<T: Any + Send + Sync>(&mut self, inner: T) {
        self.inner = Arc::new(inner);
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
