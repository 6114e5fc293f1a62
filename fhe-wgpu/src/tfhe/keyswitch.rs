//! Key switching from the ring secret (dimension N) to the LWE secret (dimension n),
//! after the mod switch Q -> q (`shaders/tfhe/keyswitch.wgsl`).

use fhe_api::{EvaluationKey, ExtractedLwe, LweCiphertext, ParamSet, Result};

use super::{
    decode_lwe, group_buffers, group_size, par_fill, run_group, runs, Chunk, Stage, WgpuPrepared, LOOP_BUDGET,
};
use crate::device::Gpu;
use crate::ring::{Pipelines, WG};

const BINDINGS: &str = include_str!("../shaders/tfhe/bindings.wgsl");
const SHADER: &str = include_str!("../shaders/tfhe/keyswitch.wgsl");

/// The WGSL after the set's header: the shared bindings, then the kernel.
pub fn shader_body() -> String {
    format!("{BINDINGS}\n{SHADER}")
}

/// The key-switching key, 16-bit words packed in pairs, chunked by ring coefficient.
pub(super) fn upload_ksk(gpu: &Gpu, ek: &EvaluationKey) -> Result<Vec<Chunk>> {
    let p = ek.params().params();
    let (big_n, n) = (p.big_n(), p.n());
    let max = gpu.max_binding();
    // Key-switching samples of ring coefficient j: an even count of j per chunk keeps
    // each chunk's start on a whole packed word.
    let per_j = p.ksk_levels.0 * (p.ksk_base() as usize - 1);
    let mut ksk = Vec::new();
    for (lo, hi) in runs(big_n, (per_j * (n + 1) * 2) as u64, max, 2)? {
        let words = (hi - lo) * per_j * (n + 1);
        let mut host = vec![0u16; words + words % 2];
        par_fill(&mut host[..words], per_j * (n + 1), |jj, out| ek.ksk_rows(lo + jj, out))?;
        let buf = gpu.upload("key-switching key", bytemuck::cast_slice(&host), wgpu::BufferUsages::empty())?;
        ksk.push(Chunk { lo: lo as u32, hi: hi as u32, buf });
    }
    Ok(ksk)
}

/// Ring coefficients one key-switch dispatch may cover (even, like the key chunks).
pub(super) fn key_switch_span(set: ParamSet) -> usize {
    let p = set.params();
    let levels = p.ksk_levels.0;
    let logq = p.lwe_modulus_log.0 as usize;
    let per = |work: usize| work.div_ceil(WG as usize);
    // Per coefficient: the digit pass (with ms_to_q's bit loop) and, for each output
    // word an invocation owns, one iteration per digit.
    let per_j = per(levels) * (1 + logq) + per(p.n() + 1) * levels + 1;
    ((LOOP_BUDGET - per(p.n() + 1) * (2 + logq)) / per_j / 2 * 2).max(2)
}

/// Key switching of extracted samples uploaded for the call.
pub fn key_switch_batch(
    gpu: &Gpu,
    pipes: &Pipelines,
    key: &WgpuPrepared,
    inputs: &[ExtractedLwe],
) -> Result<Vec<LweCiphertext>> {
    let set = pipes.set;
    let mut out = Vec::with_capacity(inputs.len());
    for group in inputs.chunks(group_size(gpu, set)) {
        let words: Vec<u64> = group.iter().flat_map(|c| c.as_words().iter().copied()).collect();
        let g = group_buffers(gpu, set, group.len(), &[], Some(&words))?;
        let words = run_group(gpu, pipes, key, &g, Stage::KeySwitch { add: 0 }, &pipes.sign_lut)?;
        out.extend(decode_lwe(set, key.tag, &words)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_set_fits_the_loop_budget() {
        for set in ParamSet::ALL {
            let span = key_switch_span(set);
            assert!(span >= 2 && span.is_multiple_of(2), "{set}: key-switch span {span}");
        }
    }
}
