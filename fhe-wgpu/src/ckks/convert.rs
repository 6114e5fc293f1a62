//! ModUp and the rounding ModDown of hybrid key switching on the device (steps 1 and 4
//! of the CPU's `keyswitch.rs`, with its `convert.rs`; the GPU backend's `convert.rs`):
//!
//! 1. ModUp of `d` (evaluation form over `q_0..q_l`): every limb to coefficient form;
//!    one `mod_up` dispatch writes every `E_j` over `q_0..q_l, P` in coefficient form
//!    (own limbs copied, the others converted); then one forward NTT over every digit's
//!    limbs, which gives back `d`'s own limbs exactly.
//! 4. ModDown of both halves `u` over `q_0..q_l, P` at once: their `P` limbs to
//!    coefficient form, the rounding conversion to `q_0..q_l` (`mod_down`), to
//!    evaluation form `w`, then `(u_i - w_i) P^-1 mod q_i` combined into the output as
//!    [`Finish`] says.

use fhe_api::Result;

use super::eltwise::{run, Op};
use super::launch::{Args, Bind, Ctx, Kernel};
use super::plan::WgpuLevel;

/// How ModDown's result `r_i` meets the output limb `out_i`.
#[derive(Clone, Copy)]
pub(crate) enum Finish<'b> {
    /// `out_i = r_i`.
    Set,
    /// `out_i = out_i + r_i`.
    Add,
    /// `out_i = z_i[index] + r_i` (a rotation's `c0`, the permutation fused in).
    AddPermuted(&'b wgpu::Buffer, &'b wgpu::Buffer),
}

/// The arguments over a level's extended basis `q_0..q_l, P`: `parts` polynomials of
/// `l + 1 + K` limbs, limb `t > l` over `p_{t - l - 1}`.
pub(crate) fn ext_args(c: &Ctx<'_>, lp: &WgpuLevel, parts: usize) -> Args {
    let q_limbs = lp.level + 1;
    Args { split: q_limbs as u32, hi: lp.q_len as u32, ..c.args(parts, q_limbs + lp.p_len) }
}

/// The arguments over `P`'s `K` limbs alone.
pub(crate) fn p_args(c: &Ctx<'_>, lp: &WgpuLevel, parts: usize) -> Args {
    Args { first: lp.q_len as u32, ..c.args(parts, lp.p_len) }
}

/// Words of a level's `E`: `[digit][l + 1 + K][N]`.
pub(crate) fn ext_words(c: &Ctx<'_>, lp: &WgpuLevel) -> usize {
    lp.digits * (lp.level + 1 + lp.p_len) * c.n()
}

/// Step 1: `E` of `d` (`l + 1` limbs in evaluation form at word `d_off` of `d`) into
/// `ext` ([`ext_words`] words).
pub(crate) fn mod_up(c: &Ctx<'_>, lp: &WgpuLevel, d: &wgpu::Buffer, d_off: usize, ext: &wgpu::Buffer) -> Result<()> {
    let n = c.n();
    let q_limbs = lp.level + 1;
    let coeff = c.alloc(q_limbs * n)?;
    let copy = Args { x_off: d_off as u32, ..c.args(1, q_limbs) };
    run(c, Op::Copy, copy, Bind { out: Some(&coeff), x: Some(d), ..Bind::default() })?;
    c.ntt(&coeff, 0, &c.args(1, q_limbs), q_limbs, false)?;
    let ea = ext_args(c, lp, 1);
    let a = Args { a_off: lp.at.starts as u32, aux: [lp.digits as u32, 0, 0, 0], ..ea };
    let b = Bind { out: Some(ext), x: Some(&coeff), sc: Some(&lp.scalars), ..Bind::default() };
    c.run(Kernel::ModUp, &a, b, lp.digits * ea.limbs as usize * n)?;
    c.ntt(ext, 0, &ea, lp.digits * ea.limbs as usize, true)
}

/// The key-switching sums of both halves, ModDown's input, in one buffer: their limbs
/// over `q_0..q_l` (`[2][l + 1][N]`), then over `P` (`[2][K][N]`, so one dispatch
/// transforms both).
pub(crate) struct SwitchSums {
    pub buf: wgpu::Buffer,
    /// The word where the `P` limbs start.
    pub p: usize,
}

impl SwitchSums {
    pub(crate) fn new(c: &Ctx<'_>, lp: &WgpuLevel) -> Result<SwitchSums> {
        let q_words = 2 * (lp.level + 1) * c.n();
        Ok(SwitchSums { buf: c.alloc(q_words + 2 * lp.p_len * c.n())?, p: q_words })
    }
}

/// Step 4 on both halves `u` (their `P` limbs are overwritten), into `out`'s two parts
/// of `l + 1` limbs, part `k` finished as `finish[k]` says.
pub(crate) fn mod_down(
    c: &Ctx<'_>,
    lp: &WgpuLevel,
    u: &SwitchSums,
    out: &wgpu::Buffer,
    finish: [Finish<'_>; 2],
) -> Result<()> {
    let n = c.n();
    let (q_limbs, k) = (lp.level + 1, lp.p_len);
    let w = c.alloc(2 * q_limbs * n)?;
    c.ntt(&u.buf, u.p, &p_args(c, lp, 1), 2 * k, false)?;
    let down = Args { x_off: u.p as u32, a_off: lp.at.half as u32, aux: [k as u32, 0, 0, 0], ..ext_args(c, lp, 2) };
    // `mod_down` walks q's limbs only; its P records are limbs l + 1.. of the map.
    let down = Args { limbs: q_limbs as u32, ..down };
    c.run(
        Kernel::ModDown,
        &down,
        Bind { out: Some(&w), x: Some(&u.buf), sc: Some(&lp.scalars), ..Bind::default() },
        2 * q_limbs * n,
    )?;
    c.ntt(&w, 0, &c.args(1, q_limbs), 2 * q_limbs, true)?;
    let finishing = |parts: usize, at: usize, f: Finish<'_>| -> Result<()> {
        let a = Args {
            out_off: at as u32,
            x_off: at as u32,
            y_off: at as u32,
            a_off: lp.at.p_inv as u32,
            ..c.args(parts, q_limbs)
        };
        let b = Bind { out: Some(out), x: Some(&u.buf), y: Some(&w), sc: Some(&lp.scalars), ..Bind::default() };
        match f {
            Finish::Set => run(c, Op::SubScale, a, b),
            Finish::Add => run(c, Op::SubScaleAdd, a, b),
            Finish::AddPermuted(z, index) => {
                let a = Args { gather: 1, z_off: 0, ..a };
                run(c, Op::SubScalePerm, a, Bind { z: Some(z), index: Some(index), ..b })
            }
        }
    };
    // One dispatch for both parts when they finish alike (a gather's `z` is one part's).
    match finish {
        [Finish::Set, Finish::Set] => finishing(2, 0, Finish::Set),
        [Finish::Add, Finish::Add] => finishing(2, 0, Finish::Add),
        [f0, f1] => {
            finishing(1, 0, f0)?;
            finishing(1, q_limbs * n, f1)
        }
    }
}
