//! Gadget decomposition of the blind rotation's accumulator into signed digits, as
//! residues, `out` `[level][slot]`: the same algorithm, and so the same words, as
//! [`crate::tfhe::ring::Ring::decompose`], compiled three times (portable, AVX2,
//! AVX-512) and chosen by [`Isa`]. [`decompose`] on 32-bit words (rings below `2^29`),
//! [`decompose_lower`] on 64-bit words (the 54-bit ring).

use crate::mem::Isa;

pub use w32::decompose;
pub use w64::decompose_lower;

mod w32 {
    use super::Isa;

    /// Signed gadget digits of `poly` (coefficient form, `Q < 2^31`) as 32-bit residues,
    /// `out` `[level][slot]`: the same algorithm, and so the same words, as
    /// [`crate::tfhe::ring::Ring::decompose`], in `i32` lanes. One pass: sixteen slots at a time
    /// stay in registers through every level (`N` is a multiple of 16 on every ring). `out`
    /// holds the first `rows` of the `levels` digits: the blind rotation asks for all but
    /// the top one, whose place `NTT(ACC)` takes (`crate::tfhe::ginx32::ginx_step`).
    #[inline(always)]
    fn decompose_body(q: u32, log_bg: u32, levels: usize, poly: &[u32], out: &mut [u32]) {
        const W: usize = 16;
        let n = poly.len();
        let rows = out.len() / n;
        assert!(
            n.is_multiple_of(W) && (1..=levels).contains(&rows) && out.len() == rows * n,
            "out holds the first digits of poly"
        );
        let (q, bg) = (q as i32, 1i32 << log_bg);
        let (half_bg, half_q) = (bg >> 1, q / 2);
        for (c, x) in poly.chunks_exact(W).enumerate() {
            // A loop, not `array::from_fn` (see `ntt::lanes`, "Building register arrays").
            let mut v = [0i32; W];
            for (v, &x) in v.iter_mut().zip(x) {
                let x = x as i32;
                *v = if x > half_q { x - q } else { x };
            }
            for l in 0..rows.min(levels - 1) {
                let d_out = &mut out[l * n + c * W..][..W];
                for (d_out, v) in d_out.iter_mut().zip(v.iter_mut()) {
                    let mut d = *v & (bg - 1);
                    d -= if d >= half_bg { bg } else { 0 };
                    *v = (*v - d) >> log_bg;
                    *d_out = (d + if d < 0 { q } else { 0 }) as u32;
                }
            }
            if rows == levels {
                let top = &mut out[(levels - 1) * n + c * W..][..W];
                for (t, &v) in top.iter_mut().zip(&v) {
                    *t = (v + if v < 0 { q } else { 0 }) as u32;
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn decompose_avx2(q: u32, log_bg: u32, levels: usize, poly: &[u32], out: &mut [u32]) {
        decompose_body(q, log_bg, levels, poly, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx512vl")]
    fn decompose_avx512(q: u32, log_bg: u32, levels: usize, poly: &[u32], out: &mut [u32]) {
        decompose_body(q, log_bg, levels, poly, out)
    }

    /// See [`decompose_body`]; dispatches on `isa`.
    pub fn decompose(isa: Isa, q: u32, log_bg: u32, levels: usize, poly: &[u32], out: &mut [u32]) {
        match isa {
            Isa::Portable => decompose_body(q, log_bg, levels, poly, out),
            // SAFETY: `Isa::detect` returned it only after checking the CPU's features.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { decompose_avx2(q, log_bg, levels, poly, out) },
            // SAFETY: `Isa::detect` returned it only after checking the CPU's features.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { decompose_avx512(q, log_bg, levels, poly, out) },
        }
    }
}

mod w64 {
    use super::Isa;
    use crate::tfhe::ginx64::CHUNK;

    /// The lower `out.len() / N` signed gadget digits of `poly` (coefficient form) as
    /// residues, `out` `[level][slot]`: the same algorithm, and so the same words, as the
    /// first rows of [`crate::tfhe::ring::Ring::decompose`]. The blind rotation asks for all but the
    /// top one, whose place `NTT(ACC)` takes. Eight slots at a time stay in registers
    /// through every level, as in [`super::w32::decompose`].
    #[inline(always)]
    fn decompose_body(q: u64, log_bg: u32, levels: usize, poly: &[u64], out: &mut [u64]) {
        let n = poly.len();
        let rows = out.len() / n.max(1);
        assert!(
            n.is_multiple_of(CHUNK) && rows < levels && out.len() == rows * n,
            "out holds the lower digits of poly"
        );
        let (q, bg) = (q as i64, 1i64 << log_bg);
        let (half_bg, half_q) = (bg >> 1, q / 2);
        for (c, x) in poly.chunks_exact(CHUNK).enumerate() {
            let mut v = [0i64; CHUNK];
            for (v, &x) in v.iter_mut().zip(x) {
                let x = x as i64;
                *v = if x > half_q { x - q } else { x };
            }
            for l in 0..rows {
                let d_out = &mut out[l * n + c * CHUNK..][..CHUNK];
                for (d_out, v) in d_out.iter_mut().zip(v.iter_mut()) {
                    let mut d = *v & (bg - 1);
                    d -= if d >= half_bg { bg } else { 0 };
                    *v = (*v - d) >> log_bg;
                    *d_out = (d + if d < 0 { q } else { 0 }) as u64;
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx512vl")]
    fn decompose_avx512(q: u64, log_bg: u32, levels: usize, poly: &[u64], out: &mut [u64]) {
        decompose_body(q, log_bg, levels, poly, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn decompose_avx2(q: u64, log_bg: u32, levels: usize, poly: &[u64], out: &mut [u64]) {
        decompose_body(q, log_bg, levels, poly, out)
    }

    /// See [`decompose_body`]; dispatches on `isa`.
    pub fn decompose_lower(isa: Isa, q: u64, log_bg: u32, levels: usize, poly: &[u64], out: &mut [u64]) {
        match isa {
            Isa::Portable => decompose_body(q, log_bg, levels, poly, out),
            // SAFETY: `Isa::detect` returned Avx2 only after checking the CPU supports AVX2.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { decompose_avx2(q, log_bg, levels, poly, out) },
            // SAFETY: `Isa::detect` returned Avx512 only after checking AVX-512F/DQ/VL.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { decompose_avx512(q, log_bg, levels, poly, out) },
        }
    }
}
