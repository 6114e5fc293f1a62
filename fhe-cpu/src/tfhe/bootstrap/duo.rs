//! One ciphertext's blind rotation on two threads ([`blind_rotate_duo`]): the barrier
//! the threads meet at each phase, the words they share, and the slot that keeps two-
//! thread rotations to half the cores ([`DuoSlot`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::*;

/// One ciphertext's blind rotation on two threads, for the latency of a single gate:
/// the caller's thread and one it spawns, each with its half of every step.
///
/// Thread `t` owns accumulator part `t` (coefficient form) and slots
/// `t N/2 .. (t + 1) N/2` of `NTT(ACC)`; a step is three phases between two barriers:
/// 1. the NTTs of part `t`'s lower digits into the shared `digits`, and the monomials;
/// 2. (after barrier A: every digit row is written) the GINX kernel on its slots, which
///    reads its half of the key pair (the pair layout is chunk by chunk, so that is one
///    front-to-back run of words) and all digit rows at its slots, and writes its slots
///    of both parts' update into its `upd`;
/// 3. (after barrier B: every update slot is written) part `t`'s update, half from each
///    thread's `upd`, through the inverse NTT into its accumulator part.
///
/// Each shared buffer is written in one phase by one thread and read in another:
/// `digits` part `t` is written in phase 1 by thread `t` and read in phase 2 by both;
/// `upd[t]` is written in phase 2 by thread `t` and read in phase 3 by both. Between a
/// write and a read of the same words lies a barrier, and so does one between a read
/// and the next step's write of them (thread `t` writes `digits` part `t` after barrier
/// B, which the other thread reaches only once done reading it, and `upd[t]` after the
/// next step's barrier A). The arithmetic on every word is the one-thread step's, so
/// the words are the same ([`tests::duo_matches_one_thread`]).
pub fn blind_rotate_duo(ring: &Ring, key: &CpuPrepared, ct: &LweCiphertext, lut: &Lut) -> ExtractedLwe {
    // A multi-bit key has another layout: `blind_rotate_batch` sends it to `multi_bit`.
    assert!(ring.params.grouping().is_none(), "GINX rotation of a multi-bit set's key");
    if ring.small.is_some() {
        duo_words::<u32>(ring, key, ct, lut)
    } else {
        duo_words::<u64>(ring, key, ct, lut)
    }
}

fn duo_words<W: Word>(ring: &Ring, key: &CpuPrepared, ct: &LweCiphertext, lut: &Lut) -> ExtractedLwe {
    let p = ring.params;
    let (n, rows, levels) = (p.big_n(), p.rgsw_rows(), p.bsk_levels.0);
    let (half, lower_len) = (n / 2, (levels - 1) * n);
    let log2n = (2 * n).trailing_zeros();
    let logq = p.lwe_modulus_log.0;
    let pairs = W::pairs(key);
    let pair_len = 2 * rows * 2 * n;
    let (mut acc, mut eval) = (Aligned::<W>::zeroed(2 * n), Aligned::<W>::zeroed(2 * n));
    initial_acc(ring, ct, lut, &mut acc, &mut eval);
    let digits = Shared::<W>::zeroed(2 * lower_len);
    let upd = [Shared::<W>::zeroed(2 * half), Shared::<W>::zeroed(2 * half)];
    let barrier = Barrier2::default();
    let run = |t: usize| -> Aligned<W> {
        let leave = barrier.leave_on_panic(t);
        let mut own_acc = Aligned::<W>::zeroed(n);
        own_acc.copy_from_slice(&acc[t * n..(t + 1) * n]);
        let slots = t * half..(t + 1) * half;
        let mut own_eval = Aligned::<W>::zeroed(2 * half);
        for (o, e) in own_eval.chunks_exact_mut(half).zip(eval.chunks_exact(n)) {
            o.copy_from_slice(&e[slots.clone()]);
        }
        let (mut mono_p, mut mono_m, mut inv) = (Aligned::zeroed(n), Aligned::zeroed(n), Aligned::<W>::zeroed(n));
        let mine = t * pair_len / 2..(t + 1) * pair_len / 2;
        let mut epoch = 0;
        for (i, pair) in pairs.chunks_exact(pair_len).enumerate().take(p.n()) {
            let a = ms_to_2n(ct.a()[i], logq, log2n);
            if a == 0 {
                continue; // Both threads skip it.
            }
            let mut ahead = prefetch_window::<W>(pairs, pair_len, mine.clone(), i);
            // SAFETY: phase 1: only this thread touches `digits` part `t` (see above).
            W::digits(ring, &own_acc, unsafe { digits.get_mut(t * lower_len..(t + 1) * lower_len) }, &mut ahead);
            W::monomials(ring, a, &mut mono_p, &mut mono_m);
            epoch += 1;
            barrier.wait(t, epoch);
            {
                // SAFETY: phase 2: both threads only read `digits`; only this one touches
                // `upd[t]`. Both slices end with this block, before barrier B.
                let (lower, out) = unsafe { (digits.get(0..2 * lower_len), upd[t].get_mut(0..2 * half)) };
                let rows = Rows { lower, n, slot0: t * half, eval: &mut own_eval };
                let mono = [&mono_p[slots.clone()], &mono_m[slots.clone()]];
                W::kernel(ring, rows, &pair[mine.clone()], mono, out, &mut ahead);
            }
            epoch += 1;
            barrier.wait(t, epoch);
            for (h, u) in upd.iter().enumerate() {
                // SAFETY: phase 3: both threads only read `upd`.
                inv[h * half..(h + 1) * half].copy_from_slice(unsafe { u.get(t * half..(t + 1) * half) });
            }
            W::finish(ring, &mut inv, &mut own_acc, &mut ahead);
            ahead.rest();
        }
        drop(leave);
        own_acc
    };
    let (acc_a, acc_b) = run_on_two(run);
    let [a, b] = [acc_a, acc_b].map(|acc| acc.iter().map(|&x| x.into()).collect::<Vec<u64>>());
    sample_extract(ring, key.tag, &a, &b)
}

/// `run(0)` on the caller's thread and `run(1)` on a helper it spawns, kept off the
/// caller's CPU ([`keep_off_cpu`]); a panic on either reaches the caller (with
/// [`Barrier2::leave_on_panic`], the other side runs to its end first).
pub(crate) fn run_on_two<T: Send>(run: impl Fn(usize) -> T + Sync) -> (T, T) {
    let caller_cpu = current_cpu();
    std::thread::scope(|scope| {
        let helper = scope.spawn(|| {
            keep_off_cpu(caller_cpu);
            run(1)
        });
        let a = run(0);
        (a, helper.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    })
}

/// The CPU the calling thread runs on, where the OS says.
fn current_cpu() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `sched_getcpu` takes no arguments and only reads the caller's state.
        let cpu = unsafe { libc::sched_getcpu() };
        usize::try_from(cpu).ok()
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Binds the calling thread (the helper of [`blind_rotate_duo`], which ends with the
/// rotation) to one CPU of the process's set other than `cpu`, the caller's. Left to
/// itself, Linux sometimes starts the helper on the caller's CPU and leaves it there
/// for tens of milliseconds when the other core has just been busy; two threads that
/// meet at a barrier every few microseconds then share one core, and a rotation takes
/// several times as long (`docs/perf/2026-12-05.md`, "Lab notes moved from the code"). Where the
/// set has no other CPU, or on other systems, nothing changes.
fn keep_off_cpu(cpu: Option<usize>) {
    #[cfg(target_os = "linux")]
    if let Some(cpu) = cpu {
        // SAFETY: `set` is a plain bit set, zeroed then filled by the kernel; pid 0 is the
        // calling thread, and the size passed is the set's.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            if libc::sched_getaffinity(0, size, &mut set) != 0 {
                return;
            }
            let max = 8 * size;
            if let Some(other) = (0..max).find(|&c| c != cpu && libc::CPU_ISSET(c, &set)) {
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(other, &mut one);
                let _ = libc::sched_setaffinity(0, size, &one);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

/// Words both threads of [`blind_rotate_duo`] reach through one pointer. Which thread
/// may write or read which words when is that function's protocol; its barriers order
/// every write before the other thread's reads of the same words.
pub(crate) struct Shared<W> {
    ptr: *mut W,
    len: usize,
    /// Owns the words `ptr` points into (an `Aligned` never moves its storage).
    _words: Aligned<W>,
}

// SAFETY: the words are plain integers; the access protocol above keeps one thread's
// writes from overlapping the other's reads or writes of the same words.
unsafe impl<W: Send + Sync> Sync for Shared<W> {}

impl<W: Copy + Default> Shared<W> {
    pub(crate) fn zeroed(len: usize) -> Self {
        let mut words = Aligned::zeroed(len);
        Shared { ptr: words.as_mut_ptr(), len, _words: words }
    }

    /// # Safety
    /// No thread writes `r` while the slice lives.
    pub(crate) unsafe fn get(&self, r: Range<usize>) -> &[W] {
        assert!(r.start <= r.end && r.end <= self.len, "shared words: range");
        // SAFETY: inside the buffer (checked); no writer (the caller's promise).
        unsafe { std::slice::from_raw_parts(self.ptr.add(r.start), r.len()) }
    }

    /// # Safety
    /// No other thread reads or writes `r`, and this thread holds no other slice of it,
    /// while the slice lives.
    #[allow(clippy::mut_from_ref)] // Exclusive by the caller's promise, not by `&mut self`.
    pub(crate) unsafe fn get_mut(&self, r: Range<usize>) -> &mut [W] {
        assert!(r.start <= r.end && r.end <= self.len, "shared words: range");
        // SAFETY: inside the buffer (checked); exclusive (the caller's promise).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(r.start), r.len()) }
    }
}

/// Spins before a waiting thread of [`Barrier2`] starts yielding its core: a phase of
/// a step takes a few microseconds, and a thread that waits much longer has most likely
/// lost its partner to the scheduler (more busy threads than cores), which yielding
/// gives back.
const SPINS_BEFORE_YIELD: u32 = 1 << 12;

/// A barrier for two threads that meet at every phase of a step: each publishes how
/// many barriers it has reached and waits for the other's count. Its `Release` store and
/// `Acquire` load make a thread's writes before a barrier visible to the other after it.
#[derive(Default)]
pub(crate) struct Barrier2 {
    reached: [Padded; 2],
}

/// A counter on its own pair of cache lines, so the two threads' stores do not contend
/// (adjacent-line prefetch pairs lines).
#[derive(Default)]
#[repr(align(128))]
struct Padded(std::sync::atomic::AtomicU64);

impl Barrier2 {
    /// Thread `me` has reached barrier `epoch` (1, 2, ...): waits until the other has.
    pub(crate) fn wait(&self, me: usize, epoch: u64) {
        use std::sync::atomic::Ordering::{Acquire, Release};
        self.reached[me].0.store(epoch, Release);
        let mut spins = 0;
        while self.reached[1 - me].0.load(Acquire) < epoch {
            if spins < SPINS_BEFORE_YIELD {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// A guard that, if thread `me` unwinds, marks every barrier as reached, so the other
    /// thread runs to its end instead of waiting forever, and the panic reaches the caller.
    pub(crate) fn leave_on_panic(&self, me: usize) -> impl Drop + '_ {
        struct Leave<'a>(&'a Barrier2, usize);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.reached[self.1].0.store(u64::MAX, std::sync::atomic::Ordering::Release);
                }
            }
        }
        Leave(self, me)
    }
}

/// Two-thread blind rotations running now, in this process.
static DUOS: AtomicUsize = AtomicUsize::new(0);

/// Leave to run a two-thread blind rotation, held while it runs.
pub(crate) struct DuoSlot;

impl DuoSlot {
    /// Taken when the caller is not a rayon worker (whose pool already keeps the cores
    /// busy: a batch, or a caller's own parallel loop) and fewer two-thread rotations
    /// run than half the cores, so that each one's second thread finds a core: a
    /// thread [`Barrier2`] waits for must not be waiting for a core.
    pub(crate) fn take() -> Option<DuoSlot> {
        static CORES: OnceLock<usize> = OnceLock::new();
        let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if rayon::current_thread_index().is_some() {
            return None;
        }
        if DUOS.fetch_add(1, Ordering::AcqRel) < cores / 2 {
            Some(DuoSlot)
        } else {
            DUOS.fetch_sub(1, Ordering::AcqRel);
            None
        }
    }
}

impl Drop for DuoSlot {
    fn drop(&mut self) {
        DUOS.fetch_sub(1, Ordering::AcqRel);
    }
}
