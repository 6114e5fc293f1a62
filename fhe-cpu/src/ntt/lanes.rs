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
//! the loop (seen in the disassembly; the 32-bit forward went from 0.88 to 0.80 us
//! without it). The inverse kernels' `from_fn` calls were inlined (same check) and stay.

use std::cell::RefCell;
use std::thread::LocalKey;

use crate::kernels::Aligned;

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
        }
    }
}

/// `floor(w 2^32 / Q)`: the Shoup companion for 32-bit words (`w < Q < 2^30`).
pub(super) fn shoup32(w: u64, q: u64) -> u32 {
    ((w << 32) / q) as u32
}

/// The per-call scratch of the 32-bit kernels (the API's words are `u64`), on a cache-line
/// boundary ([`crate::kernels::Aligned`]) as the kernels' inner layers run in it.
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
