//! The blind rotation's NTTs: the same transforms as [`NttEngine`], with the prefetches
//! of the next step's key pair ([`Ahead`]) spread over their loops, so the pair arrives
//! from memory while the step computes. The NTT module knows nothing of the key; each
//! engine's kernels take an `Ahead` to touch, and this trait is where the bit scheme asks
//! for it.

use std::sync::Arc;

use fhe_api::Result;

use crate::mem::Ahead;
use crate::ntt::{find_variant, Avx2, Avx512, Harvey, NttEngine, NttTables, Reference};

/// An NTT engine as the blind rotation calls it. The defaults ignore `ahead` (the
/// portable engines, whose loops have no slot for it); every form gives the words of
/// the plain transform.
pub trait StreamingNtt: NttEngine {
    /// `forward` with `ahead`'s prefetches: the 54-bit ring's blind rotation.
    fn forward_streaming(&self, a: &mut [u64], ahead: &mut Ahead) {
        let _ = ahead;
        self.forward(a);
    }
    /// `inverse` with `ahead`'s prefetches; see [`StreamingNtt::forward_streaming`].
    fn inverse_streaming(&self, a: &mut [u64], ahead: &mut Ahead) {
        let _ = ahead;
        self.inverse(a);
    }
    /// `forward32` with `ahead`'s prefetches: the blind rotation of the small sets
    /// (`Q < 2^32`).
    fn forward32_streaming(&self, a: &mut [u32], ahead: &mut Ahead) {
        let _ = ahead;
        self.forward32(a);
    }
    /// `inverse32` with `ahead`'s prefetches; see [`StreamingNtt::forward32_streaming`].
    fn inverse32_streaming(&self, a: &mut [u32], ahead: &mut Ahead) {
        let _ = ahead;
        self.inverse32(a);
    }
}

impl StreamingNtt for Reference {}

impl StreamingNtt for Harvey {}

impl StreamingNtt for Avx2 {
    #[inline]
    fn forward32_streaming(&self, a: &mut [u32], ahead: &mut Ahead) {
        self.forward32_ahead(a, ahead);
    }
    #[inline]
    fn inverse32_streaming(&self, a: &mut [u32], ahead: &mut Ahead) {
        self.inverse32_ahead(a, ahead);
    }
}

impl StreamingNtt for Avx512 {
    #[inline]
    fn forward_streaming(&self, a: &mut [u64], ahead: &mut Ahead) {
        self.forward_ahead(a, ahead);
    }
    #[inline]
    fn inverse_streaming(&self, a: &mut [u64], ahead: &mut Ahead) {
        self.inverse_ahead(a, ahead);
    }
    #[inline]
    fn forward32_streaming(&self, a: &mut [u32], ahead: &mut Ahead) {
        self.forward32_ahead(a, ahead);
    }
    #[inline]
    fn inverse32_streaming(&self, a: &mut [u32], ahead: &mut Ahead) {
        self.inverse32_ahead(a, ahead);
    }
}

/// The engine of the NTT variant `variant` ([`crate::ntt::variants`]) for the bit
/// scheme's ring; an unknown or unsupported name is the registry's error.
pub fn engine(variant: &str, t: Arc<NttTables>) -> Result<Box<dyn StreamingNtt>> {
    let v = find_variant(variant)?;
    Ok(match v.name {
        "avx512" => Box::new(Avx512::new(t)),
        "avx2" => Box::new(Avx2::new(t)),
        "harvey" => Box::new(Harvey::new(t)),
        "reference" => Box::new(Reference::new(t)),
        other => unreachable!("NTT variant {other} has no streaming form"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fhe_api::ParamSet;
    use rand_chacha::rand_core::{RngCore, SeedableRng};

    /// Every variant has a streaming engine of its name, and every streaming form, with
    /// a stream of words to prefetch, gives the plain transform's words.
    #[test]
    fn streaming_forms_give_the_plain_words() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for set in ParamSet::ALL {
            let t = Arc::new(NttTables::for_params(set.params()));
            let a: Vec<u64> = (0..t.n).map(|_| r.next_u64() % t.modulus.q).collect();
            let key = vec![0u64; 4 * t.n];
            for v in crate::ntt::variants().iter().filter(|v| (v.supported)()) {
                let (plain, e) = ((v.build)(t.clone()), engine(v.name, t.clone()).unwrap());
                assert_eq!(e.name(), v.name);
                let (mut want, mut got) = (a.clone(), a.clone());
                plain.forward(&mut want);
                e.forward_streaming(&mut got, &mut Ahead::new(&key));
                assert_eq!(got, want, "{set} {} forward_streaming", v.name);
                plain.inverse(&mut want);
                e.inverse_streaming(&mut got, &mut Ahead::new(&key));
                assert_eq!(got, want, "{set} {} inverse_streaming", v.name);
                if t.modulus.q < 1 << 32 {
                    let mut w: Vec<u32> = a.iter().map(|&x| x as u32).collect();
                    let mut want = a.clone();
                    plain.forward(&mut want);
                    e.forward32_streaming(&mut w, &mut Ahead::new(&key));
                    assert!(w.iter().zip(&want).all(|(&x, &y)| u64::from(x) == y), "{set} {} forward32", v.name);
                    plain.inverse(&mut want);
                    e.inverse32_streaming(&mut w, &mut Ahead::new(&key));
                    assert!(w.iter().zip(&want).all(|(&x, &y)| u64::from(x) == y), "{set} {} inverse32", v.name);
                }
            }
        }
    }
}
