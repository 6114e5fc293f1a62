//! Blind rotation (GINX, ternary secrets) and sample extraction
//! (`shaders/tfhe/bootstrap.wgsl`), alone or followed on the device by key switching
//! (the fused bootstrap).

use fhe_api::{EvaluationKey, ExtractedLwe, Lut, LweCiphertext, ParamSet, Result};

use super::{
    decode_lwe, group_buffers, group_size, par_fill, run_group, runs, Chunk, Stage, WgpuPrepared, LOOP_BUDGET,
};
use crate::device::Gpu;
use crate::ring::{Pipelines, WG};

const BINDINGS: &str = include_str!("../shaders/tfhe/bindings.wgsl");
const SHADER: &str = include_str!("../shaders/tfhe/bootstrap.wgsl");

/// The WGSL after the set's header: the shared bindings, then the kernel.
pub fn shader_body() -> String {
    format!("{BINDINGS}\n{SHADER}")
}

/// A look-up table's coefficients as the shader reads them (plain residues, like the
/// accumulator).
pub(crate) fn upload_lut(gpu: &Gpu, lut: &Lut) -> Result<wgpu::Buffer> {
    gpu.upload("look-up table", bytemuck::cast_slice(lut.coefficients()), wgpu::BufferUsages::empty())
}

/// The bootstrap key in Montgomery form, chunked by LWE coefficient to fit bindings.
pub(super) fn upload_bsk(gpu: &Gpu, pipes: &Pipelines, ek: &EvaluationKey) -> Result<Vec<Chunk>> {
    let p = ek.params().params();
    let (big_n, rows, n) = (p.big_n(), p.rgsw_rows(), p.n());
    let per_key = rows * big_n;
    let max = gpu.max_binding();
    let mut bsk = Vec::new();
    // Two RGSW keys (s = +1, s = -1) per LWE coefficient.
    for (lo, hi) in runs(n, 2 * 2 * per_key as u64 * 8, max, 1)? {
        let mut host = vec![0u64; (hi - lo) * 2 * 2 * per_key];
        par_fill(&mut host, 2 * per_key, |k, out| {
            ek.rgsw_key_rows(2 * lo + k, out, |x| pipes.mont.to_mont(x));
            Ok(())
        })?;
        let buf = gpu.upload("bootstrap key", bytemuck::cast_slice(&host), wgpu::BufferUsages::empty())?;
        bsk.push(Chunk { lo: lo as u32, hi: hi as u32, buf });
    }
    Ok(bsk)
}

/// Loop iterations per invocation of one GINX step (an upper bound, every loop of
/// `blind_rotate` counted with its body's loops).
fn iterations_per_step(set: ParamSet) -> usize {
    let p = set.params();
    let (n, levels, rows, log_n) = (p.big_n(), p.bsk_levels.0, p.rgsw_rows(), p.big_n().trailing_zeros() as usize);
    let per = |work: usize| work.div_ceil(WG as usize);
    let decompose = per(n) * (1 + 2 * (1 + levels));
    // Radix-4 passes (two stages each), and one radix-2 stage when log N is odd.
    let (pairs, odd) = (log_n / 2, log_n % 2);
    let forward = pairs * (1 + per(rows * n / 4)) + odd * (1 + per(rows * n / 2));
    let products = per(n) * (1 + 2 * (1 + rows));
    let inverse = pairs * (1 + per(n / 2)) + odd * (1 + per(n));
    let accumulate = per(2 * n);
    1 + decompose + forward + products + inverse + accumulate
}

/// LWE coefficients one blind-rotation dispatch may cover.
pub(super) fn rotation_span(set: ParamSet) -> usize {
    ((LOOP_BUDGET - 2 * (set.params().big_n() / WG as usize + 1)) / iterations_per_step(set)).max(1)
}

fn rotate_groups<T>(
    gpu: &Gpu,
    pipes: &Pipelines,
    key: &WgpuPrepared,
    inputs: &[LweCiphertext],
    stage: Stage,
    lut: &wgpu::Buffer,
    decode: impl Fn(&[u8]) -> Result<Vec<T>>,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(inputs.len());
    for group in inputs.chunks(group_size(gpu, pipes.set)) {
        let words: Vec<u32> = group.iter().flat_map(|c| c.as_words().iter().copied()).collect();
        let g = group_buffers(gpu, pipes.set, group.len(), &words, None)?;
        out.extend(decode(&run_group(gpu, pipes, key, &g, stage, lut)?)?);
    }
    Ok(out)
}

/// Blind rotation with test polynomial `lut` (of `pipes`' set; the caller checks): the
/// sign table is resident, any other is uploaded for the call.
pub fn blind_rotate_batch(
    gpu: &Gpu,
    pipes: &Pipelines,
    key: &WgpuPrepared,
    inputs: &[LweCiphertext],
    lut: &Lut,
) -> Result<Vec<ExtractedLwe>> {
    let set = pipes.set;
    let uploaded;
    let table = if lut.is_sign() {
        &pipes.sign_lut
    } else {
        uploaded = upload_lut(gpu, lut)?;
        &uploaded
    };
    rotate_groups(gpu, pipes, key, inputs, Stage::BlindRotate, table, |bytes| {
        let words: Vec<u64> = bytemuck::pod_collect_to_vec(bytes);
        words.chunks(set.params().big_n() + 1).map(|w| ExtractedLwe::from_raw(set, key.tag, w.to_vec())).collect()
    })
}

/// The fused bootstrap: blind rotation, extraction, key switch and `+ q/8` on the
/// device in one submission per group, nothing read back in between.
pub fn bootstrap_batch(
    gpu: &Gpu,
    pipes: &Pipelines,
    key: &WgpuPrepared,
    inputs: &[LweCiphertext],
) -> Result<Vec<LweCiphertext>> {
    let add = (pipes.set.params().q_lwe() / 8) as u32;
    rotate_groups(gpu, pipes, key, inputs, Stage::Bootstrap { add }, &pipes.sign_lut, |b| {
        decode_lwe(pipes.set, key.tag, b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_set_fits_the_loop_budget() {
        for set in ParamSet::ALL {
            let per = iterations_per_step(set);
            assert!(per < LOOP_BUDGET / 4, "{set}: {per} iterations per step");
            assert!(rotation_span(set) >= 1, "{set}");
        }
    }
}
