//! # Lux FHE runtime
//!
//! Fully homomorphic encryption, two schemes on one ring: bits with gate bootstrapping
//! (and encrypted integers on top), and RNS-CKKS, approximate arithmetic on vectors of
//! complex numbers ([`ckks`]), on pluggable backends chosen at run time. Every backend
//! produces byte-identical keys and ciphertexts to the CPU oracle.
//!
//! ```no_run
//! use lux_fhe::{Engine, ParamSet};
//!
//! # fn main() -> lux_fhe::Result<()> {
//! let engine = Engine::from_env()?; // LUX_FHE_BACKEND=cpu|cuda|hip|wgpu|auto
//! let keys = engine.keygen(ParamSet::PN10QP27)?;
//! let server = engine.server_key(&keys.ek)?;
//! let a = engine.encrypt_bit(&keys.pk, true)?;
//! let b = engine.encrypt_bit(&keys.pk, false)?;
//! let c = server.xor(&a, &b)?;
//! assert!(engine.decrypt_bit(&keys.sk, &c)?);
//! # Ok(())
//! # }
//! ```
//!
//! Encrypted integers ([`FheUint`], 1 to 256 bits) are gate circuits on top: see
//! [`integer`] and `docs/INTEGERS.md`. CKKS:
//!
//! ```no_run
//! use lux_fhe::ckks::{KeygenOptions, Mode, Preset};
//!
//! # fn main() -> lux_fhe::Result<()> {
//! let engine = lux_fhe::Engine::from_env()?;
//! let ctx = engine.ckks(Preset::Slots4096Scale40Depth2)?;
//! let keys = ctx.keygen(&KeygenOptions::default())?;
//! let ev = ctx.evaluator_with(&keys.eval, Mode::Auto)?;
//! let x = ctx.encrypt(&keys.pk, &ctx.encode(&[0.5, -0.25])?)?;
//! let y = ev.add(&ev.mul(&x, &x)?, &x)?; // x * x + x
//! let values = ctx.decrypt(&keys.sk, &y)?;
//! # Ok(())
//! # }
//! ```
//!
//! Backends are cargo features of this crate (`cuda`, `hip`, `wgpu`, as their crates
//! land); the CPU oracle is always built. [`registry()`] holds the backends this build
//! has; [`available`] says whether one can run here.

use std::sync::Arc;

// What a user of the runtime names, listed rather than glob-imported so that backend-side
// internals (ring arithmetic, key generation steps, per-key caches, the conformance
// suite) do not become this crate's API by accident. Modules: `ckks` (the second
// scheme), `format` (bytes of keys and ciphertexts), `gates` (batched and mixed gates),
// `integer` (encrypted integers), `ops` (the backend traits, for a backend crate),
// `params`, `registry`, `rng`.
pub use fhe_api::tfhe::params;
pub use fhe_api::{format, ops, registry, rng};
pub use fhe_api::{
    Backend, BackendEntry, BackendKind, BackendOptions, BootstrapOps, DecodeError, DeviceInfo, Error, EvaluationKey,
    ExtractedLwe, KeySet, KeyTag, LweCiphertext, NttOps, ParamSet, Params, PreparedKey, Probe, PublicKey, Registry,
    Result, RingOps, SecretKey, Seed, Selection, Unavailable,
};
pub use fhe_schemes::integer::{self, FheUint, IntOp};
pub use fhe_schemes::tfhe::{gates, Gate, ServerKey};

/// RNS-CKKS: approximate arithmetic on vectors of complex numbers (`docs/CKKS.md`).
///
/// ```no_run
/// use lux_fhe::ckks::{KeygenOptions, Preset};
///
/// # fn main() -> lux_fhe::Result<()> {
/// let engine = lux_fhe::Engine::from_env()?;
/// let ctx = engine.ckks(Preset::Slots4096Scale40Depth2)?;
/// let keys = ctx.keygen(&KeygenOptions { rotations: vec![1], ..Default::default() })?;
/// let ev = ctx.evaluator(&keys.eval)?;
/// let x = ctx.encrypt(&keys.pk, &ctx.encode(&[0.5, 0.25])?)?;
/// let y = ev.rotate(&ev.rescale(&ev.mul(&x, &x)?)?, 1)?;
/// let slots = ctx.decrypt(&keys.sk, &y)?;
/// # Ok(())
/// # }
/// ```
pub mod ckks {
    pub use fhe_api::ckks::{
        Ciphertext, EvalKeys, HostCiphertext, KeySet, Params, ParamsLiteral, Plaintext, PreparedPlaintext, Preset,
        PublicKey, Scale, SecretDist, SecretKey, SwitchKind, SwitchingKey,
    };
    pub use fhe_schemes::ckks::circuits::{
        chebyshev_depth, precision_floor_bits, relative_precision, seed_two_chains, sum_rotations, EncapsulationKeys,
        MemoryEstimate, PhaseTimes,
    };
    pub use fhe_schemes::ckks::{
        precision_bits, BootstrapConfig, Bootstrapper, Chebyshev, Complex, Context, DiagonalForm, Evaluator,
        FeFunction, FourierSeries, FunctionalBootstrapper, FunctionalChain, FunctionalConfig, HoistedCiphertext,
        KeyLevels, KeygenOptions, LinearTransform, Mode, PlainOperand, PreparedLinearTransform,
    };
}

/// The backends compiled into this build, as registry entries.
pub fn registry() -> Registry {
    #[allow(unused_mut)]
    let mut r = Registry::new([fhe_cpu::ENTRY]);
    #[cfg(feature = "cuda")]
    r.register(fhe_cuda::ENTRY);
    #[cfg(feature = "hip")]
    r.register(fhe_hip::ENTRY);
    #[cfg(feature = "wgpu")]
    r.register(fhe_wgpu::ENTRY);
    r
}

/// True when `kind`'s cargo feature is on in this build (whether or not a device answers).
pub fn compiled_in(kind: BackendKind) -> bool {
    registry().contains(kind)
}

/// True exactly when `kind` is compiled in and a device answers.
pub fn available(kind: BackendKind) -> bool {
    registry().available(kind)
}

/// A backend chosen by the `LUX_FHE_BACKEND` contract, and the client-side operations.
#[derive(Clone)]
pub struct Engine {
    backend: Arc<dyn Backend>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Engine({})", self.backend.name())
    }
}

impl Engine {
    /// From `LUX_FHE_BACKEND` (`cpu`, `cuda`, `hip`, `wgpu`, `auto` or unset, optionally
    /// `kind:ntt-variant`), `LUX_FHE_NTT` and `LUX_FHE_DEVICE`. A required backend that
    /// cannot run is an error naming its cause; an unknown value lists the valid ones; a
    /// value that is not UTF-8 is an error naming its variable; a `LUX_FHE_NTT` naming
    /// another variant than `LUX_FHE_BACKEND`'s is an error (README.md, "Choosing a
    /// backend", has the precedence table).
    pub fn from_env() -> Result<Engine> {
        Ok(Engine { backend: registry().from_env()? })
    }

    /// From an explicit selection string with the syntax of `LUX_FHE_BACKEND`, which it
    /// replaces: `LUX_FHE_BACKEND` is not read; `LUX_FHE_NTT`, `LUX_FHE_DEVICE` (and the
    /// CPU backend's `LUX_FHE_BOOTSTRAP_THREADS`) are, by the same rule as
    /// [`Engine::from_env`] (README.md, "Choosing a backend"): a `LUX_FHE_NTT` naming
    /// another variant than `selection`'s `:variant` is an error.
    pub fn with_backend(selection: &str) -> Result<Engine> {
        Ok(Engine { backend: registry().from_vars(&registry::EnvVars::read(), Some(selection))? })
    }

    /// Wraps an already constructed backend.
    pub fn from_backend(backend: Arc<dyn Backend>) -> Engine {
        Engine { backend }
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// Keys from a 32-byte seed: reproducible, byte-equal on every backend.
    pub fn keygen_from_seed(&self, params: ParamSet, seed: &Seed) -> Result<KeySet> {
        fhe_schemes::tfhe::keygen_from_seed(&*self.backend, params, seed)
    }

    /// Keys from a fresh OS-random seed.
    pub fn keygen(&self, params: ParamSet) -> Result<KeySet> {
        fhe_schemes::tfhe::keygen(&*self.backend, params)
    }

    /// Public-key encryption with OS randomness.
    pub fn encrypt_bit(&self, pk: &PublicKey, bit: bool) -> Result<LweCiphertext> {
        fhe_schemes::tfhe::encrypt_bit(pk, bit)
    }

    /// Public-key encryption with the randomness of `seed` (tests, known answers).
    pub fn encrypt_bit_seeded(&self, pk: &PublicKey, bit: bool, seed: &Seed) -> Result<LweCiphertext> {
        fhe_schemes::tfhe::encrypt_bit_seeded(pk, bit, seed)
    }

    pub fn decrypt_bit(&self, sk: &SecretKey, ct: &LweCiphertext) -> Result<bool> {
        fhe_schemes::tfhe::decrypt_bit(sk, ct)
    }

    /// CKKS with a named preset on this engine's backend; `Error::Unsupported` when the
    /// backend has no CKKS (see [`ckks::Context`]).
    pub fn ckks(&self, preset: ckks::Preset) -> Result<ckks::Context> {
        ckks::Context::from_preset(self.backend.clone(), preset)
    }

    /// CKKS with custom parameters ([`ckks::Params::new`] from a [`ckks::ParamsLiteral`]),
    /// refused when they exceed the 128-bit bound.
    pub fn ckks_with_params(&self, params: ckks::Params) -> Result<ckks::Context> {
        ckks::Context::new(self.backend.clone(), Arc::new(params))
    }

    /// Prepares the evaluation key on the backend (uploads it, for a GPU) once.
    pub fn server_key(&self, ek: &EvaluationKey) -> Result<ServerKey> {
        ServerKey::new(self.backend.clone(), ek)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A required GPU backend either runs or fails at once with its cause: "not
    /// compiled in" without its feature, the missing driver or device with it.
    #[test]
    fn cpu_is_always_available_and_a_missing_gpu_backend_says_why() {
        assert!(available(BackendKind::Cpu));
        for k in [BackendKind::Cuda, BackendKind::Hip, BackendKind::Wgpu] {
            if available(k) {
                assert!(Engine::with_backend(k.name()).is_ok(), "{k} probes available but does not construct");
                continue;
            }
            let e = Engine::with_backend(k.name()).unwrap_err().to_string();
            assert!(e.contains(&format!("backend `{k}` unavailable")), "{e}");
            if !compiled_in(k) {
                assert!(e.contains("not compiled in") && e.contains(&format!("`{}`", k.feature())), "{e}");
            } else {
                assert!(!e.contains("not compiled in"), "{e}");
            }
        }
    }

    #[test]
    fn selection_strings() {
        assert_eq!(Engine::with_backend("cpu").unwrap().backend().kind(), BackendKind::Cpu);
        assert_eq!(Engine::with_backend("auto").unwrap().backend().kind(), BackendKind::Cpu);
        assert_eq!(Engine::with_backend("cpu:reference").unwrap().backend().name(), "cpu:reference");
        let e = Engine::with_backend("bogus").unwrap_err().to_string();
        assert!(e.contains("valid values: cpu, cuda, hip, wgpu, auto"), "{e}");
        let e = Engine::with_backend("cpu:nope").unwrap_err().to_string();
        assert!(e.contains("reference"), "{e}");
    }

    #[test]
    fn engine_round_trip() {
        let engine = Engine::with_backend("cpu").unwrap();
        let keys = engine.keygen_from_seed(ParamSet::PN10QP27, &Seed::derive("facade", 0)).unwrap();
        let server = engine.server_key(&keys.ek).unwrap();
        let t = engine.encrypt_bit(&keys.pk, true).unwrap();
        let f = engine.encrypt_bit(&keys.pk, false).unwrap();
        assert!(engine.decrypt_bit(&keys.sk, &server.xor(&t, &f).unwrap()).unwrap());
        assert!(!engine.decrypt_bit(&keys.sk, &server.and(&t, &f).unwrap()).unwrap());
        assert!(engine.decrypt_bit(&keys.sk, &server.mux(&t, &t, &f).unwrap()).unwrap());
        assert!(!engine.decrypt_bit(&keys.sk, &server.not(&t)).unwrap());
        assert_eq!(server.tag(), keys.ek.tag());
        assert_eq!(server.xor(&t, &f).unwrap().tag(), keys.ek.tag());
    }

    /// Issue 27: another key of the same set is refused by its tag, in decryption, in a
    /// gate, in a gate mixing two keys, and in integer circuits (a shift has no gate).
    #[test]
    fn another_key_of_the_same_set_is_wrong_key() {
        let engine = Engine::with_backend("cpu").unwrap();
        let set = ParamSet::PN10QP27;
        let a = engine.keygen_from_seed(set, &Seed::derive("facade-tags", 0)).unwrap();
        let b = engine.keygen_from_seed(set, &Seed::derive("facade-tags", 1)).unwrap();
        let (sa, sb) = (engine.server_key(&a.ek).unwrap(), engine.server_key(&b.ek).unwrap());
        fn wrong<T>(r: Result<T>) -> bool {
            matches!(r, Err(Error::WrongKey { .. }))
        }
        for bit in [false, true] {
            let ct = engine.encrypt_bit(&a.pk, bit).unwrap();
            let theirs = engine.encrypt_bit(&b.pk, bit).unwrap();
            assert_eq!(engine.decrypt_bit(&a.sk, &ct).unwrap(), bit);
            let e = engine.decrypt_bit(&b.sk, &ct).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains(&a.pk.tag().to_string()) && msg.contains(&b.sk.tag().to_string()), "{msg}");
            assert!(wrong(sb.and(&ct, &ct)));
            assert!(wrong(sa.and(&ct, &theirs)));
            assert!(wrong(sa.mux(&ct, &ct, &theirs)));
            assert!(wrong(sa.refresh_batch(&[theirs])));
        }
        let x = FheUint::encrypt(&a.pk, 4, 5).unwrap();
        let y = FheUint::encrypt(&b.pk, 4, 3).unwrap();
        assert!(wrong(sa.add(&x, &y)));
        assert!(wrong(sb.shl(&x, 1)));
        let mixed = vec![x.bits()[0].clone(), y.bits()[1].clone()];
        assert!(wrong(FheUint::from_bits(mixed)));
        // Constants belong to no key: they mix with either.
        let k = FheUint::trivial(set, 4, &[2]).unwrap();
        assert_eq!(sa.add(&x, &k).unwrap().decrypt_u128(&a.sk).unwrap(), 7);
    }

    /// `gate` and `mixed_batch` against every gate kind's truth table (one batch holding
    /// all 24 rows), and mismatched operands refused with an error.
    #[test]
    fn run_time_gates_and_mixed_batches_match_truth_tables() {
        let engine = Engine::with_backend("cpu").unwrap();
        let set = ParamSet::PN10QP27;
        let keys = engine.keygen_from_seed(set, &Seed::derive("facade-gates", 0)).unwrap();
        let server = engine.server_key(&keys.ek).unwrap();
        let bits = [false, true].map(|b| engine.encrypt_bit(&keys.pk, b).unwrap());
        let mut rows = Vec::new();
        for g in Gate::ALL {
            for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
                rows.push((g, a, b));
            }
        }
        for &(g, a, b) in &rows {
            let out = server.gate(g, &bits[a as usize], &bits[b as usize]).unwrap();
            assert_eq!(engine.decrypt_bit(&keys.sk, &out).unwrap(), g.eval_plain(a, b), "{g:?}({a}, {b})");
        }
        let batch: Vec<_> = rows.iter().map(|&(g, a, b)| (g, &bits[a as usize], &bits[b as usize])).collect();
        let out = server.mixed_batch(&batch).unwrap();
        assert_eq!(out.len(), rows.len());
        for (&(g, a, b), ct) in rows.iter().zip(&out) {
            assert_eq!(engine.decrypt_bit(&keys.sk, ct).unwrap(), g.eval_plain(a, b), "batched {g:?}({a}, {b})");
        }
        assert!(server.mixed_batch(&[]).unwrap().is_empty());

        // Operands of another set: an error naming both sets, never a panic.
        let other = ParamSet::ALL.into_iter().find(|&p| p != set).unwrap();
        let foreign = gates::constant(other, true);
        for e in [
            server.gate(Gate::And, &bits[0], &foreign).unwrap_err(),
            server.gate(Gate::Or, &foreign, &foreign).unwrap_err(),
            server.mixed_batch(&[(Gate::Xor, &bits[1], &bits[0]), (Gate::Nand, &foreign, &foreign)]).unwrap_err(),
        ] {
            assert!(matches!(e, Error::ParamMismatch { .. }), "{e}");
        }
    }
}
