//! Register schedules shared by the SIMD variants.
//!
//! The last layers of the forward transform (and the first of the inverse) pair
//! coefficients closer than one register apart. A block of `2L` coefficients sits in two
//! registers `(A, B)` of `L` lanes; before each such layer one two-source permutation
//! gathers the layer's upper inputs into `A` and their partners into `B`, taken from
//! wherever the previous layer left them, so the block never goes back to memory between
//! layers. The schedule records those permutations, the original position of every lane
//! (for the twiddle tables) and the permutation back to natural order.
//!
//! Building register arrays: the forward kernels' block loops fill their arrays of
//! vectors in plain loops, not with `std::array::from_fn`, whose closure there was
//! compiled out of line and called behind a `vzeroupper` that spilled every register of
//! the loop (seen in the disassembly; the gain is in `docs/perf/2026-12-05.md`, "Lab notes moved
//! from the code"). The inverse kernels' `from_fn` calls were inlined (same check) and stay.

use std::cell::RefCell;
use std::thread::LocalKey;

use crate::mem::Aligned;

/// One register-resident layer.
pub(super) struct Step {
    /// Butterfly distance of this layer.
    pub half: usize,
    /// Two-source permutation indices (`p < L`: lane `p` of `A`, else lane `p - L` of `B`).
    pub perm: [Vec<u32>; 2],
    /// Position within the block of each lane of the new `A` (its partner is `+ half`).
    pub x_pos: Vec<usize>,
}

pub(super) struct Schedule {
    pub steps: Vec<Step>,
    /// From the layout the last step leaves back to natural order (`A` = first `L`).
    pub to_natural: [Vec<u32>; 2],
}

/// The schedule for layers of the given distances, run in that order from natural order.
pub(super) fn schedule(lanes: usize, halves: &[usize]) -> Schedule {
    let mut state: Vec<usize> = (0..2 * lanes).collect();
    let gather = |state: &[usize], want: &[usize]| -> Vec<u32> {
        want.iter().map(|w| state.iter().position(|s| s == w).expect("a permutation") as u32).collect()
    };
    let mut steps = Vec::new();
    for &half in halves {
        let x_pos: Vec<usize> = (0..2 * lanes).filter(|i| i & half == 0).collect();
        let y_pos: Vec<usize> = x_pos.iter().map(|i| i + half).collect();
        let perm = [gather(&state, &x_pos), gather(&state, &y_pos)];
        state = x_pos.iter().chain(&y_pos).copied().collect();
        steps.push(Step { half, perm, x_pos });
    }
    let natural: Vec<usize> = (0..2 * lanes).collect();
    let to_natural = [gather(&state, &natural[..lanes]), gather(&state, &natural[lanes..])];
    Schedule { steps, to_natural }
}

/// The twiddle of every butterfly of one step, in lane order, block after block:
/// coefficient `g` at distance `half` uses `tw[N / (2 half) + g / (2 half)]`, the index
/// the radix-2 loops of `reference` use in both directions.
pub(super) fn expand(tw: &[u64], n: usize, lanes: usize, step: &Step) -> Vec<u64> {
    let span = 2 * step.half;
    (0..n / (2 * lanes))
        .flat_map(|b| step.x_pos.iter().map(move |&p| tw[n / span + (b * 2 * lanes + p) / span]))
        .collect()
}

/// A [`Schedule`] with its twiddles, for one direction, in the kernel's lane type.
pub(super) struct Layers<T> {
    pub perm: Vec<[Vec<T>; 2]>,
    pub tw: Vec<Vec<T>>,
    pub tws: Vec<Vec<T>>,
    pub to_natural: [Vec<T>; 2],
}

/// Everything a SIMD kernel reads, converted to its lane type `T` once at build time.
/// `shoup` gives the companion matching the kernel's word size.
pub(super) struct Plan<T> {
    pub n: usize,
    pub q: T,
    pub w: Vec<T>,
    pub ws: Vec<T>,
    pub iw: Vec<T>,
    pub iws: Vec<T>,
    pub fwd: Layers<T>,
    pub inv: Layers<T>,
    /// `1/N`, and `ipsi_rev[1] / N`: the last inverse layer folds the scaling in.
    pub n_inv: T,
    pub n_inv_s: T,
    pub wn: T,
    pub wn_s: T,
    /// Companion of 1: `mul_shoup(x, 1)` reduces any lazy value.
    pub one_s: T,
    /// The cheaper reduction of a lazy forward output, where `Q` allows it
    /// ([`Plan::with_fold`]); `None` keeps `mul_shoup(x, 1)`.
    pub fold: Option<PowerFold>,
}

/// Reduction by the modulus's distance to the power of two above it. With
/// `Q = 2^k - c`, a value `v = h 2^k + l` (`l < 2^k`) is `l + h c` modulo `Q`; when that is
/// below `2Q` for every `v` below the bound, one conditional subtraction finishes it. It
/// applies to moduli just below a power of two, as the parameter sets' primes are
/// (`2^27 - 2047`, `2^25 - 4095`, `2^54 - 77823`).
///
/// The 64-bit AVX-512 kernel finishes its lazy forward outputs this way (a shift, a mask,
/// one `vpmuludq` and an add, where a Shoup multiplication by one costs three `vpmuludq`
/// and two three-uop `vpmullq`), which made the 54-bit forward faster (`docs/perf/2026-12-05.md`,
/// "Lab notes moved from the code"). The 32-bit kernels' finish is a smaller share of a
/// cheaper transform: the same change there did not separate from noise, so they keep
/// the Shoup finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PowerFold {
    /// `2^k` is the power of two above `Q`.
    pub k: u32,
    /// `c = 2^k - Q`.
    pub c: u64,
}

impl PowerFold {
    /// The fold for `q` and every value below `bound`, if `l + h c < 2Q` holds for the
    /// largest `h` and both `c` and that `h` are at most `max_factor` (what the kernel's
    /// small multiply takes); `None` otherwise.
    pub fn new(q: u64, bound: u128, max_factor: u64) -> Option<PowerFold> {
        let k = u64::BITS - q.leading_zeros();
        let c = (1u128 << k) - u128::from(q);
        let h_max = (bound.checked_sub(1)?) >> k;
        let fits = c <= u128::from(max_factor) && h_max <= u128::from(max_factor);
        (fits && (1u128 << k) - 1 + h_max * c < 2 * u128::from(q)).then_some(PowerFold { k, c: c as u64 })
    }

    /// `v mod q` for `v` below the bound given to [`PowerFold::new`], as the kernels
    /// compute it.
    #[cfg(test)]
    pub fn reduce(&self, v: u64, q: u64) -> u64 {
        let r = (v & ((1 << self.k) - 1)) + (v >> self.k) * self.c;
        if r >= q {
            r - q
        } else {
            r
        }
    }
}

impl<T: Copy> Plan<T> {
    pub fn new(t: &super::NttTables, lanes: usize, conv: fn(u64) -> T, shoup: impl Fn(u64) -> T) -> Plan<T> {
        let n = t.n;
        let layers = |tw: &[u64], halves: &[usize]| {
            let s = schedule(lanes, halves);
            let conv_v = |v: &[u32]| v.iter().map(|&p| conv(p.into())).collect::<Vec<T>>();
            let expanded: Vec<Vec<u64>> = s.steps.iter().map(|st| expand(tw, n, lanes, st)).collect();
            Layers {
                perm: s.steps.iter().map(|st| [conv_v(&st.perm[0]), conv_v(&st.perm[1])]).collect(),
                tw: expanded.iter().map(|e| e.iter().map(|&w| conv(w)).collect()).collect(),
                tws: expanded.iter().map(|e| e.iter().map(|&w| shoup(w)).collect()).collect(),
                to_natural: [conv_v(&s.to_natural[0]), conv_v(&s.to_natural[1])],
            }
        };
        let down: Vec<usize> = (0..lanes.trailing_zeros()).rev().map(|k| 1 << k).collect();
        let up: Vec<usize> = down.iter().rev().copied().collect();
        let wn = t.modulus.mul(t.ipsi_rev[1], t.n_inv);
        Plan {
            n,
            q: conv(t.modulus.q),
            w: t.psi_rev.iter().map(|&w| conv(w)).collect(),
            ws: t.psi_rev.iter().map(|&w| shoup(w)).collect(),
            iw: t.ipsi_rev.iter().map(|&w| conv(w)).collect(),
            iws: t.ipsi_rev.iter().map(|&w| shoup(w)).collect(),
            fwd: layers(&t.psi_rev, &down),
            inv: layers(&t.ipsi_rev, &up),
            n_inv: conv(t.n_inv),
            n_inv_s: shoup(t.n_inv),
            wn: conv(wn),
            wn_s: shoup(wn),
            one_s: shoup(1),
            fold: None,
        }
    }

    /// This plan with a [`PowerFold`] for lazy forward outputs, which stay below
    /// `(1 + growth log N) Q` when each layer adds `growth Q` to the bound, where one
    /// applies with factors up to `max_factor`.
    pub fn with_fold(self, q: u64, growth: u64, max_factor: u64) -> Plan<T> {
        let bound = (1 + u128::from(growth) * u128::from(self.n.trailing_zeros())) * u128::from(q);
        Plan { fold: PowerFold::new(q, bound, max_factor), ..self }
    }
}

/// `floor(w 2^32 / Q)`: the Shoup companion for 32-bit words (`w < Q < 2^30`).
pub(super) fn shoup32(w: u64, q: u64) -> u32 {
    ((w << 32) / q) as u32
}

/// The per-call scratch of the 32-bit kernels (the API's words are `u64`), on a cache-line
/// boundary ([`crate::mem::Aligned`]) as the kernels' inner layers run in it.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn with_scratch<R>(n: usize, f: impl FnOnce(&mut [u32]) -> R) -> R {
    thread_local! {
        static SCRATCH: RefCell<Aligned<u32>> = RefCell::new(Aligned::default());
    }
    borrow_scratch(&SCRATCH, n, f)
}

/// The 64-bit kernels' per-call scratch, as [`with_scratch`].
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn with_scratch64<R>(n: usize, f: impl FnOnce(&mut [u64]) -> R) -> R {
    thread_local! {
        static SCRATCH: RefCell<Aligned<u64>> = RefCell::new(Aligned::default());
    }
    borrow_scratch(&SCRATCH, n, f)
}

/// `n` words of this thread's scratch, grown (never shrunk) on first need.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn borrow_scratch<T: Copy + Default, R>(
    scratch: &'static LocalKey<RefCell<Aligned<T>>>,
    n: usize,
    f: impl FnOnce(&mut [T]) -> R,
) -> R {
    scratch.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < n {
            *s = Aligned::zeroed(n);
        }
        f(&mut s[..n])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::{RngCore, SeedableRng};

    #[test]
    fn power_fold_takes_the_sets_primes_and_refuses_the_rest() {
        // The 32-bit kernels: bound (1 + 2 log N) Q, factors of 15 bits (`vpmaddwd`).
        let q27 = (1 << 27) - 2047;
        assert_eq!(PowerFold::new(q27, 21 * q27 as u128, (1 << 15) - 1), Some(PowerFold { k: 27, c: 2047 }));
        let q25 = (1 << 25) - 4095;
        assert_eq!(PowerFold::new(q25, 21 * q25 as u128, (1 << 15) - 1), Some(PowerFold { k: 25, c: 4095 }));
        // The 64-bit kernel: bound (1 + 3 log N) Q, 32-bit factors (`vpmuludq`).
        let q54 = (1 << 54) - 77823;
        assert_eq!(PowerFold::new(q54, 34 * q54 as u128, u32::MAX.into()), Some(PowerFold { k: 54, c: 77823 }));
        // A prime just above a power of two: `c` near `Q`, `l + h c` far above `2Q`.
        let q = (1 << 26) + 2049;
        assert_eq!(PowerFold::new(q, 21 * q as u128, (1 << 15) - 1), None);
        // `l + h c` one short of `2Q` at the largest `h` is taken; at `2Q` it is not.
        // With k = 4: Q = 15 (c = 1), l + h c = 15 + h < 30 for h <= 14, so bound 15 * 16 = 240.
        assert!(PowerFold::new(15, 240, 100).is_some());
        assert!(PowerFold::new(15, 241, 100).is_none());
        // A factor the multiply cannot take.
        assert_eq!(PowerFold::new(q27, 21 * q27 as u128, 2046), None);
        assert_eq!(PowerFold::new(q27, 0, 1 << 15), None, "an empty range");
    }

    #[test]
    fn power_fold_reduces_every_value_below_its_bound() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for (q, bound, max) in [
            ((1u64 << 27) - 2047, 21 * ((1u128 << 27) - 2047), (1u64 << 15) - 1),
            ((1 << 25) - 4095, 21 * ((1 << 25) - 4095), (1 << 15) - 1),
            ((1 << 54) - 77823, 34 * ((1 << 54) - 77823), u32::MAX.into()),
            (15, 240, 100),
        ] {
            let f = PowerFold::new(q, bound, max).expect("applies");
            let bound = bound as u64;
            let ends = [0, 1, q - 1, q, q + 1, 2 * q - 1, bound - 1, bound - q, (bound - 1) & !((1 << f.k) - 1)];
            for v in ends.into_iter().chain((0..100_000).map(|_| rng.next_u64() % bound)) {
                assert_eq!(f.reduce(v, q), v % q, "q {q} v {v}");
            }
        }
    }
}
