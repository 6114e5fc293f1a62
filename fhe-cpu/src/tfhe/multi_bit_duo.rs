//! One multi-bit blind rotation on two threads, for the latency of a lone programmable
//! bootstrap (a sequential carry's block): the caller's thread and one it spawns, each
//! with half of every step, meeting at the barrier of [`crate::tfhe::bootstrap`]'s
//! two-thread GINX rotation ([`Barrier2`], same protocol).
//!
//! Thread `t` owns accumulator part `t` (coefficient form) and slots
//! `t N/2 .. (t + 1) N/2` of `NTT(ACC)`; a step is three phases between two barriers:
//! 1. the lower digits of part `t` and their NTTs into the shared `lower`, and the
//!    monomials at its slots;
//! 2. (after barrier A: every digit row is written) the dropped digit's top rows and the
//!    kernel at its slots, which reads its half of the group's key (the layout is chunk
//!    by chunk, so that is one front-to-back run) and all digit rows at its slots, and
//!    writes both parts' update at its slots into its `upd`; `NTT(ACC) += upd` there;
//! 3. (after barrier B: every update slot is written) part `t`'s update, half from each
//!    thread's `upd`, through the inverse NTT into its accumulator part.
//!
//! `lower` part `t` is written in phase 1 by thread `t` and read in phase 2 by both;
//! `upd[t]` is written in phase 2 by thread `t` and read in phase 3 by both. Between a
//! write and a read of the same words lies a barrier, and so does one between a read and
//! the next step's write of them (as in the GINX duo). Every word gets the one-thread
//! step's arithmetic (exact mod `Q`, slot by slot), so the words are the same
//! (`tests::duo_matches_one_thread`).

use fhe_api::{Lut, LweCiphertext};

use crate::mem::{Ahead, Aligned};
use crate::tfhe::bootstrap::{initial_acc_b, ms_to_2n, run_on_two, Barrier2, CpuPrepared, Shared};
use crate::tfhe::decompose::decompose_lower;
use crate::tfhe::ginx64::{add_mod, sub_mod_into, Wide};
use crate::tfhe::multi_bit::{kernel, term_exponent, Rows};
use crate::tfhe::ring::Ring;

/// The rotated accumulator of `ct`, `[part][slot]` in coefficient form, as
/// `multi_bit::blind_rotate` gives it, computed on two threads.
pub(crate) fn blind_rotate(
    ring: &Ring,
    wide: Wide,
    key: &CpuPrepared,
    ct: &LweCiphertext,
    lut: &Lut,
    k: usize,
    terms: usize,
) -> Aligned<u64> {
    let p = ring.params;
    let (n, q, isa) = (ring.n(), ring.modulus.q, ring.isa);
    let half = n / 2;
    let (levels, exact, dropped) = (p.bsk_levels.0, p.bsk_exact_levels(), p.bsk_dropped_levels());
    let lower_len = (exact - 1) * n;
    let (log2n, logq) = ((2 * n).trailing_zeros(), p.lwe_modulus_log.0);
    let group_len = terms * 2 * p.rgsw_rows() * n;
    let key_half = group_len / 2;
    let groups = &key.bsk[..p.n() / k * group_len];
    let mut acc = Aligned::<u64>::zeroed(2 * n);
    initial_acc_b(ring, ct, lut, &mut acc[n..]);
    let mut eval = Aligned::<u64>::zeroed(2 * n);
    eval.copy_from_slice(&acc);
    ring.ntt.forward(&mut eval[n..]); // NTT(0) = 0 for the `a` part
    let lower = Shared::<u64>::zeroed(2 * lower_len);
    let upd = [Shared::<u64>::zeroed(2 * n), Shared::<u64>::zeroed(2 * n)];
    let barrier = Barrier2::default();
    let run = |t: usize| -> Aligned<u64> {
        let leave = barrier.leave_on_panic(t);
        let slots = t * half..(t + 1) * half;
        let mut own_acc = Aligned::<u64>::zeroed(n);
        own_acc.copy_from_slice(&acc[t * n..(t + 1) * n]);
        // Whole rows, of which this thread keeps its slots (the kernel's operands).
        let mut own_eval = Aligned::<u64>::zeroed(2 * n);
        own_eval.copy_from_slice(&eval);
        let mut own_top = Aligned::<u64>::zeroed(if dropped > 0 { 2 * n } else { 0 });
        let mut mono = Aligned::<u64>::zeroed(terms * n);
        let mut inv = Aligned::<u64>::zeroed(n);
        let mut epoch = 0;
        for (g, group_key) in groups.chunks_exact(group_len).enumerate() {
            let mut a = [0usize; 3];
            for (j, a) in a.iter_mut().enumerate().take(k) {
                *a = ms_to_2n(ct.a()[g * k + j], logq, log2n);
            }
            if a.iter().all(|&x| x == 0) {
                continue; // Both threads skip it.
            }
            let next_at = (g + 1) * group_len + t * key_half;
            let next = groups.get(next_at..next_at + key_half / 8).unwrap_or(&[]);
            let mut ahead = Ahead::two(&group_key[t * key_half..(t + 1) * key_half], next);
            {
                // SAFETY: phase 1: only this thread touches `lower` part `t` (module docs).
                let own_lower = unsafe { lower.get_mut(t * lower_len..(t + 1) * lower_len) };
                decompose_lower(isa, q, p.bsk_base_log.0, exact, &own_acc, own_lower);
                for d in own_lower.chunks_exact_mut(n) {
                    ring.ntt.forward_streaming(d, &mut ahead);
                }
            }
            for (term, m) in mono.chunks_exact_mut(n).enumerate() {
                ring.monomial_minus_one_at(term_exponent(&a[..k], term, n), slots.clone(), &mut m[slots.clone()]);
            }
            epoch += 1;
            barrier.wait(t, epoch);
            {
                // SAFETY: phase 2: both threads only read `lower`; only this one touches
                // `upd[t]`. Both slices end with this block, before barrier B.
                let (all_lower, out) = unsafe { (lower.get(0..2 * lower_len), upd[t].get_mut(0..2 * n)) };
                if dropped > 0 {
                    // The kept digits recompose `acc - d_0`: the top rows are
                    // `NTT(acc) - NTT(d_0)` at this thread's slots.
                    for part in 0..2 {
                        let (at, d0) = (part * n + slots.start, part * lower_len + slots.start);
                        let (e, top) = (&own_eval[at..at + half], &mut own_top[at..at + half]);
                        sub_mod_into(isa, q, e, &all_lower[d0..d0 + half], top);
                    }
                }
                let top = if dropped > 0 { &own_top } else { &own_eval };
                let rows = Rows { lower: all_lower, eval: top, n, levels, dropped, slots: slots.clone() };
                kernel(isa, wide, &rows, group_key, &mono, out, &mut ahead);
                for part in 0..2 {
                    let at = part * n + slots.start;
                    add_mod(isa, q, &mut own_eval[at..at + half], &out[at..at + half]);
                }
            }
            epoch += 1;
            barrier.wait(t, epoch);
            for (h, u) in upd.iter().enumerate() {
                // SAFETY: phase 3: both threads only read `upd`.
                let part = unsafe { u.get(t * n + h * half..t * n + (h + 1) * half) };
                inv[h * half..(h + 1) * half].copy_from_slice(part);
            }
            ring.ntt.inverse_streaming(&mut inv, &mut ahead);
            add_mod(isa, q, &mut own_acc, &inv);
        }
        drop(leave);
        own_acc
    };
    let (acc_a, acc_b) = run_on_two(run);
    acc[..n].copy_from_slice(&acc_a);
    acc[n..].copy_from_slice(&acc_b);
    acc
}
