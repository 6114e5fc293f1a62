//! The ring both schemes share: `Z_q[X]/(X^N + 1)` for one NTT prime, and products of
//! such primes in residue number system (RNS) form.
//!
//! | module | holds |
//! |---|---|
//! | `dims` | the newtypes both schemes name their rings by: [`PolynomialSize`], [`RingModulus`] |
//! | [`modulus`] | fast arithmetic modulo one prime (Barrett, Shoup) |
//! | [`math`] | definitional arithmetic: `pow_mod`, primality, the NTT root and order |
//! | [`prime`] | NTT-prime generation for a ring degree and a bit size |
//! | [`ntt`] | NTT tables built from `(N, q)` alone |
//! | [`rns`] | an RNS basis: CRT, fast base conversion, ModUp/ModDown, rescale |
//! | [`moddown`] | ModDown that rounds: the exact centered remainder modulo `P` |
//! | [`automorphism`] | Galois automorphisms `X -> X^g` on coefficient and evaluation form |

pub mod automorphism;
mod dims;
pub mod math;
pub mod moddown;
pub mod modulus;
pub mod ntt;
pub mod prime;
pub mod rns;

pub use dims::{PolynomialSize, RingModulus};
