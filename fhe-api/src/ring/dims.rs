//! The dimensions both schemes' rings are named by: a ring degree cannot be passed where
//! a modulus is expected, nor either where an LWE dimension is.

/// Ring degree `N` of `Z_q[X]/(X^N + 1)` (a power of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PolynomialSize(pub usize);

/// A prime ring modulus `q` (`q = 1 mod 2N`, so the negacyclic NTT exists): the bit
/// scheme's `Q`, or one prime of a CKKS chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RingModulus(pub u64);
