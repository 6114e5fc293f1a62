//! The look-up table of a blind rotation: the test polynomial `TV` whose rotation by the
//! input's phase selects the output (programmable bootstrapping).
//!
//! A blind rotation turns an input of phase `m` (mod-switched to `[0, 2N)`) into an
//! encryption, under the ring secret mod `Q`, of coefficient 0 of `X^-m TV`: `TV[m]` for
//! `m < N` and `-TV[m - N]` for `m >= N` ([`Lut::value`]). So a table is a function of
//! the phase `f: [0, 2N) -> Z_Q` that is negacyclic, `f(m + N) = -f(m)`, and is stored as
//! its first half. The sign table ([`Lut::sign`], every coefficient `round(Q/8)`) is the
//! gates' bootstrap; its words are the ones every backend had hard-coded before.

use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::keyed_cache::KeyedCache;
use crate::tfhe::params::ParamSet;

/// A test polynomial for one parameter set: `N` coefficients, each below `Q`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lut {
    set: ParamSet,
    coefficients: Vec<u64>,
    /// Every coefficient is `round(Q/8)`: backends keep that table resident.
    sign: bool,
}

impl Lut {
    /// The sign table, every coefficient `round(Q/8)`: the output encrypts `+round(Q/8)`
    /// when the input phase is in `[0, q/2)`, else `-round(Q/8)`. Built once per set and
    /// shared, so a gate costs no allocation for it.
    pub fn sign(set: ParamSet) -> Arc<Lut> {
        static SIGN: OnceLock<KeyedCache<ParamSet, Lut>> = OnceLock::new();
        SIGN.get_or_init(KeyedCache::new).get_or_init(&set, || {
            let p = set.params();
            Lut { set, coefficients: vec![sign_word(set); p.big_n()], sign: true }
        })
    }

    /// A table from its `N` coefficients: an error names the first word at or above `Q`
    /// or the length the set needs.
    pub fn from_coefficients(set: ParamSet, coefficients: Vec<u64>) -> Result<Lut> {
        let p = set.params();
        let invalid = |detail: String| Error::InvalidLut { params: set.name(), detail };
        if coefficients.len() != p.big_n() {
            return Err(invalid(format!("{} coefficients, the ring has N = {}", coefficients.len(), p.big_n())));
        }
        if let Some((i, &w)) = coefficients.iter().enumerate().find(|(_, &w)| w >= p.q_ring()) {
            return Err(invalid(format!("coefficient {i} is {w}, not below Q = {}", p.q_ring())));
        }
        let mu = sign_word(set);
        let sign = coefficients.iter().all(|&w| w == mu);
        Ok(Lut { set, coefficients, sign })
    }

    /// The table whose blind rotation maps phase `m` to `f(m)`, for `m` in `[0, 2N)`.
    /// `f` must be negacyclic (`f(m + N) = -f(m) mod Q`; a blind rotation cannot compute
    /// anything else) with values below `Q`; an error names the first `m` that is not.
    pub fn from_fn(set: ParamSet, f: impl Fn(usize) -> u64) -> Result<Lut> {
        let p = set.params();
        let (n, q) = (p.big_n(), p.q_ring());
        let coefficients: Vec<u64> = (0..n).map(&f).collect();
        let lut = Lut::from_coefficients(set, coefficients)?;
        for m in 0..n {
            let (lo, hi) = (lut.coefficients[m], f(m + n));
            if hi != (q - lo) % q {
                let detail =
                    format!("f({}) = {hi} is not -f({m}) = {} mod Q (a table is negacyclic)", m + n, (q - lo) % q);
                return Err(Error::InvalidLut { params: set.name(), detail });
            }
        }
        Ok(lut)
    }

    pub fn params(&self) -> ParamSet {
        self.set
    }

    /// The `N` coefficients of the test polynomial, each below `Q`.
    pub fn coefficients(&self) -> &[u64] {
        &self.coefficients
    }

    /// True when every coefficient is the sign table's.
    pub fn is_sign(&self) -> bool {
        self.sign
    }

    /// What a blind rotation of an input of (mod-switched) phase `m` encrypts.
    pub fn value(&self, m: usize) -> u64 {
        let (n, q) = (self.coefficients.len(), self.set.params().q_ring());
        let m = m % (2 * n);
        if m < n {
            self.coefficients[m]
        } else {
            (q - self.coefficients[m - n]) % q
        }
    }

    /// Checks that this table belongs to `set`.
    pub fn check_params(&self, set: ParamSet) -> Result<()> {
        if self.set != set {
            return Err(Error::ParamMismatch { expected: set.name().into(), found: self.set.name().into() });
        }
        Ok(())
    }
}

/// `round(Q/8)`, the sign table's word.
fn sign_word(set: ParamSet) -> u64 {
    (set.params().q_ring() + 4) / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_is_round_q_over_8_and_shared() {
        for set in ParamSet::ALL {
            let p = set.params();
            let s = Lut::sign(set);
            assert!(s.is_sign());
            assert_eq!(s.coefficients(), vec![(p.q_ring() + 4) / 8; p.big_n()]);
            assert!(Arc::ptr_eq(&s, &Lut::sign(set)));
            assert_eq!(s.value(p.big_n()), p.q_ring() - (p.q_ring() + 4) / 8);
            let again = Lut::from_coefficients(set, s.coefficients().to_vec()).unwrap();
            assert!(again.is_sign());
            assert_eq!(*s, again);
        }
    }

    #[test]
    fn from_fn_takes_negacyclic_functions_and_names_the_first_that_is_not() {
        let set = ParamSet::PN10QP27;
        let (n, q) = (set.params().big_n(), set.params().q_ring());
        let f = |m: usize| if m < n { m as u64 } else { (q - (m - n) as u64) % q };
        let lut = Lut::from_fn(set, f).unwrap();
        assert!(!lut.is_sign());
        for m in 0..2 * n {
            assert_eq!(lut.value(m), f(m));
        }
        let e = Lut::from_fn(set, |m| if m == n + 3 { 1 } else { f(m) }).unwrap_err().to_string();
        assert!(e.contains(&format!("f({})", n + 3)) && e.contains("PN10QP27"), "{e}");
        let e = Lut::from_fn(set, |_| q).unwrap_err().to_string();
        assert!(e.contains("coefficient 0"), "{e}");
        assert!(Lut::from_coefficients(set, vec![0; n - 1]).is_err());
        assert!(matches!(lut.check_params(ParamSet::PN11QP54), Err(Error::ParamMismatch { .. })));
    }
}
