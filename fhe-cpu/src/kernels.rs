//! The inner loops of blind rotation for moduli below `2^29`, written so the compiler
//! vectorizes them (32-bit residues, `u32 x u32 -> u64` products), compiled three
//! times (portable, AVX2, AVX-512) and chosen once at run time.
//!
//! `reduce_small`: Barrett with a 32-bit constant. For `k = bitlen(Q)`,
//! `mu = floor(2^(k-1+32) / Q) < 2^32` and `x < 2^(k+31)`, the estimate
//! `((x >> (k-1)) * mu) >> 32` is below `floor(x/Q)` by at most 3, so `x - est*Q < 4Q`
//! and two conditional subtractions (of `2Q`, then `Q`) finish it.

/// Constants of `reduce_small` for one modulus.
#[derive(Clone, Copy, Debug)]
pub struct SmallBarrett {
    pub q: u64,
    pub shift: u32,
    pub mu: u64,
}

impl SmallBarrett {
    pub fn new(q: u64) -> SmallBarrett {
        let k = 64 - q.leading_zeros();
        assert!(k <= 29, "SmallBarrett needs Q < 2^29");
        let mu = (1u128 << (k - 1 + 32)) / q as u128;
        debug_assert!(mu < 1 << 32);
        SmallBarrett { q, shift: k - 1, mu: mu as u64 }
    }

    /// `x mod Q` for `x < 2^(k+31)`.
    #[inline(always)]
    pub fn reduce(&self, x: u64) -> u64 {
        let est = (((x >> self.shift) as u32 as u64) * self.mu) >> 32;
        let r = x.wrapping_sub(est * self.q);
        let r = r.min(r.wrapping_sub(2 * self.q));
        r.min(r.wrapping_sub(self.q))
    }
}

/// One GINX step's evaluation-form work for one key pair, small modulus:
/// `upd[h] = (sum_r d_r K+[r][h]) (X^a - 1) + (sum_r d_r K-[r][h]) (X^-a - 1)`.
/// `kp`/`km` are `[row][half][slot]`; `acc` is scratch of `4 N` words.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn ginx_step_body(
    br: SmallBarrett,
    digits: &[u32],
    kp: &[u32],
    km: &[u32],
    mono_p: &[u32],
    mono_m: &[u32],
    acc: &mut [u64],
    upd: &mut [u64],
) {
    let n = mono_p.len();
    let rows = digits.len() / n;
    let (acc_p, acc_m) = acc.split_at_mut(2 * n);
    acc_p.iter_mut().for_each(|x| *x = 0);
    acc_m.iter_mut().for_each(|x| *x = 0);
    for r in 0..rows {
        let d = &digits[r * n..(r + 1) * n];
        for h in 0..2 {
            let kpr = &kp[(2 * r + h) * n..(2 * r + h + 1) * n];
            let kmr = &km[(2 * r + h) * n..(2 * r + h + 1) * n];
            let ap = &mut acc_p[h * n..(h + 1) * n];
            for ((o, &x), &y) in ap.iter_mut().zip(d).zip(kpr) {
                *o += x as u64 * y as u64;
            }
            let am = &mut acc_m[h * n..(h + 1) * n];
            for ((o, &x), &y) in am.iter_mut().zip(d).zip(kmr) {
                *o += x as u64 * y as u64;
            }
        }
    }
    for h in 0..2 {
        let ap = &acc_p[h * n..(h + 1) * n];
        let am = &acc_m[h * n..(h + 1) * n];
        let u = &mut upd[h * n..(h + 1) * n];
        for i in 0..n {
            let ep = br.reduce(ap[i]);
            let em = br.reduce(am[i]);
            u[i] = br.reduce(ep * mono_p[i] as u64 + em * mono_m[i] as u64);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn ginx_step_avx2(
    br: SmallBarrett,
    digits: &[u32],
    kp: &[u32],
    km: &[u32],
    mono_p: &[u32],
    mono_m: &[u32],
    acc: &mut [u64],
    upd: &mut [u64],
) {
    ginx_step_body(br, digits, kp, km, mono_p, mono_m, acc, upd)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
#[allow(clippy::too_many_arguments)]
unsafe fn ginx_step_avx512(
    br: SmallBarrett,
    digits: &[u32],
    kp: &[u32],
    km: &[u32],
    mono_p: &[u32],
    mono_m: &[u32],
    acc: &mut [u64],
    upd: &mut [u64],
) {
    ginx_step_body(br, digits, kp, km, mono_p, mono_m, acc, upd)
}

/// Which compiled copy of the kernels this CPU runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    pub fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512dq")
                && is_x86_feature_detected!("avx512vl")
            {
                return Isa::Avx512;
            }
            if is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Portable
    }
}

/// See [`ginx_step_body`]; dispatches on `isa`.
#[allow(clippy::too_many_arguments)]
pub fn ginx_step(
    isa: Isa,
    br: SmallBarrett,
    digits: &[u32],
    kp: &[u32],
    km: &[u32],
    mono_p: &[u32],
    mono_m: &[u32],
    acc: &mut [u64],
    upd: &mut [u64],
) {
    match isa {
        Isa::Portable => ginx_step_body(br, digits, kp, km, mono_p, mono_m, acc, upd),
        // SAFETY: `Isa::detect` returned Avx2 only after checking the CPU supports AVX2.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { ginx_step_avx2(br, digits, kp, km, mono_p, mono_m, acc, upd) },
        // SAFETY: `Isa::detect` returned Avx512 only after checking AVX-512F/DQ/VL.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { ginx_step_avx512(br, digits, kp, km, mono_p, mono_m, acc, upd) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn small_barrett_is_exact(x in 0u64..(1u64 << 58), y in 0u64..(1u64 << 56)) {
            let b = SmallBarrett::new(134_215_681);
            prop_assert_eq!(b.reduce(x), x % 134_215_681);
            let b = SmallBarrett::new(33_550_337);
            prop_assert_eq!(b.reduce(y), y % 33_550_337);
        }
    }

    #[test]
    fn small_barrett_edges() {
        for q in [134_215_681u64, 33_550_337] {
            let b = SmallBarrett::new(q);
            let k = 64 - q.leading_zeros();
            for x in [0, 1, q - 1, q, 4 * q - 1, (1u64 << (k + 31)) - 1, q * q, 16 * (q - 1) * (q - 1)] {
                if x < (1u64 << (k + 31)) {
                    assert_eq!(b.reduce(x), x % q, "q={q} x={x}");
                }
            }
        }
    }
}
