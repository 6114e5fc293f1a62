//! The bit scheme on the device: resident keys, blind rotation with sample extraction
//! ([`bootstrap`], `shaders/tfhe/bootstrap.wgsl`) and key switching ([`keyswitch`],
//! `shaders/tfhe/keyswitch.wgsl`), one workgroup per ciphertext; both kernels share one
//! bind group (`shaders/tfhe/bindings.wgsl`).
//!
//! The keys are uploaded once by [`prepare`]. A key larger than one storage binding
//! (the 54-bit set's bootstrap key is 364 MB; lavapipe binds 128 MiB) is split into
//! chunks of whole LWE coefficients (bootstrap key) or ring coefficients
//! (key-switching key). A batch runs a few dispatches per chunk, each over a range of
//! coefficients short enough for llvmpipe's loop limit, all in one submission, with
//! the accumulators resident between them.

pub mod bootstrap;
pub mod keyswitch;

use fhe_api::{Error, EvaluationKey, KeyTag, LweCiphertext, ParamSet, Result};

use crate::device::Gpu;
use crate::ring::Pipelines;

/// One chunk of a key: the coefficient range `[lo, hi)` it covers and its buffer.
pub struct Chunk {
    pub lo: u32,
    pub hi: u32,
    pub buf: wgpu::Buffer,
}

/// The wgpu backend's form of an evaluation key: both keys resident on the device.
pub struct WgpuPrepared {
    /// `[key][row][half][slot]` in Montgomery form, chunked by LWE coefficient.
    pub bsk: Vec<Chunk>,
    /// `[sample][n + 1]` 16-bit words packed in pairs, chunked by ring coefficient.
    pub ksk: Vec<Chunk>,
    /// The evaluation key's tag, carried by every output.
    pub tag: KeyTag,
}

/// Splits `total` items of `bytes_each` into runs that fit one binding (multiples of
/// `multiple` except the last).
pub(super) fn runs(total: usize, bytes_each: u64, max: u64, multiple: usize) -> Result<Vec<(usize, usize)>> {
    let fit = (max / bytes_each) as usize / multiple * multiple;
    if fit == 0 {
        return Err(Error::InvalidInput(format!(
            "one key unit of {bytes_each} bytes does not fit this adapter's {max}-byte storage binding"
        )));
    }
    Ok((0..total).step_by(fit).map(|lo| (lo, (lo + fit).min(total))).collect())
}

/// Runs `f(index, item)` over `out` split across the machine's cores; the first error
/// any unit returns (the others still run to the end of their share).
pub(super) fn par_fill<T: Send>(
    out: &mut [T],
    per: usize,
    f: impl Fn(usize, &mut [T]) -> Result<()> + Sync,
) -> Result<()> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let units = out.len() / per;
    let per_thread = units.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(per_thread * per)
            .enumerate()
            .map(|(t, block)| {
                let f = &f;
                s.spawn(move || block.chunks_mut(per).enumerate().try_for_each(|(i, unit)| f(t * per_thread + i, unit)))
            })
            .collect();
        // A panic in a unit is a broken invariant: carry it to the caller as one.
        handles.into_iter().try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

/// Expands the seeded halves on the host and uploads both keys once.
pub fn prepare(gpu: &Gpu, pipes: &Pipelines, ek: &EvaluationKey) -> Result<WgpuPrepared> {
    let bsk = bootstrap::upload_bsk(gpu, pipes, ek)?;
    let ksk = keyswitch::upload_ksk(gpu, ek)?;
    tracing::debug!(set = %ek.params(), bsk_chunks = bsk.len(), ksk_chunks = ksk.len(), "wgpu key resident");
    Ok(WgpuPrepared { bsk, ksk, tag: ek.tag() })
}

/// What one group's submission computes and reads back.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// Blind rotation and extraction: read back the extracted samples.
    BlindRotate,
    /// Key switch of uploaded extracted samples, plus `add` on `b`.
    KeySwitch { add: u32 },
    /// Everything, plus `add` on `b`.
    Bootstrap { add: u32 },
}

/// Device buffers of one group of ciphertexts.
pub(super) struct Group {
    lwe_in: wgpu::Buffer,
    work: wgpu::Buffer,
    ext: wgpu::Buffer,
    lwe_out: wgpu::Buffer,
    count: u32,
}

fn bind(
    gpu: &Gpu,
    pipes: &Pipelines,
    g: &Group,
    bsk: &wgpu::Buffer,
    ksk: &wgpu::Buffer,
    range: &wgpu::Buffer,
    lut: &wgpu::Buffer,
) -> wgpu::BindGroup {
    let buffers = [&pipes.tables, bsk, ksk, &g.lwe_in, &g.work, &g.ext, &g.lwe_out, range, lut];
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
        .collect();
    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("bootstrap"),
        layout: &pipes.bs_layout,
        entries: &entries,
    })
}

/// The most loop iterations one invocation may run in one dispatch. llvmpipe
/// (lavapipe) leaves a loop nest silently after 65535 iterations; half of that leaves
/// room for the rounding in the counts below.
pub(super) const LOOP_BUDGET: usize = 1 << 15;

/// Splits the chunks' coefficient ranges into dispatch ranges of at most `span`:
/// `(chunk index, [lo, hi, add, chunk base])`.
fn dispatch_ranges(chunks: &[(u32, u32)], span: usize, add: u32) -> Vec<(usize, [u32; 4])> {
    let mut out = Vec::new();
    for (ci, &(start, end)) in chunks.iter().enumerate() {
        let mut lo = start;
        while lo < end {
            let hi = (lo + span as u32).min(end);
            out.push((ci, [lo, hi, add, start]));
            lo = hi;
        }
    }
    out
}

fn bounds(chunks: &[Chunk]) -> Vec<(u32, u32)> {
    chunks.iter().map(|c| (c.lo, c.hi)).collect()
}

/// Records and submits one group's dispatches, then reads back its output words. `lut`
/// is the blind rotation's table (bound, unread, for a key switch alone).
pub(super) fn run_group(
    gpu: &Gpu,
    pipes: &Pipelines,
    key: &WgpuPrepared,
    g: &Group,
    stage: Stage,
    lut: &wgpu::Buffer,
) -> Result<Vec<u8>> {
    let set = pipes.set;
    // (rotation?, chunk, range uniform)
    let mut ranges = Vec::new();
    if !matches!(stage, Stage::KeySwitch { .. }) {
        for (ci, r) in dispatch_ranges(&bounds(&key.bsk), bootstrap::rotation_span(set), 0) {
            ranges.push((true, ci, gpu.uniform("range", &r)?));
        }
    }
    if let Stage::KeySwitch { add } | Stage::Bootstrap { add } = stage {
        for (ci, r) in dispatch_ranges(&bounds(&key.ksk), keyswitch::key_switch_span(set), add) {
            ranges.push((false, ci, gpu.uniform("range", &r)?));
        }
    }
    let mut encoder = gpu.encoder();
    gpu.scoped("bootstrap dispatch", || {
        let groups: Vec<(bool, wgpu::BindGroup)> = ranges
            .iter()
            .map(|(rotate, ci, range)| {
                let bg = if *rotate {
                    bind(gpu, pipes, g, &key.bsk[*ci].buf, &key.ksk[0].buf, range, lut)
                } else {
                    bind(gpu, pipes, g, &key.bsk[0].buf, &key.ksk[*ci].buf, range, lut)
                };
                (*rotate, bg)
            })
            .collect();
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
        for (rotate, bg) in &groups {
            pass.set_pipeline(if *rotate { &pipes.blind_rotate } else { &pipes.key_switch });
            pass.set_bind_group(0, bg, &[]);
            pass.dispatch_workgroups(g.count, 1, 1);
        }
    })?;
    let out = if stage == Stage::BlindRotate { &g.ext } else { &g.lwe_out };
    gpu.submit_and_read(encoder, out)
}

/// Ciphertexts per submission: bounded by the scratch binding and the dispatch size.
pub(super) fn group_size(gpu: &Gpu, set: ParamSet) -> usize {
    let p = set.params();
    let work_bytes = ((2 + p.rgsw_rows()) * p.big_n() * 8) as u64;
    ((gpu.max_binding() / work_bytes) as usize).clamp(1, 4096)
}

pub(super) fn group_buffers(
    gpu: &Gpu,
    set: ParamSet,
    count: usize,
    lwe_in: &[u32],
    ext_in: Option<&[u64]>,
) -> Result<Group> {
    let p = set.params();
    let work_bytes = ((2 + p.rgsw_rows()) * p.big_n() * 8 * count) as u64;
    let ext = match ext_in {
        Some(words) => gpu.upload("extracted", bytemuck::cast_slice(words), wgpu::BufferUsages::COPY_SRC)?,
        None => gpu.scratch("extracted", ((p.big_n() + 1) * 8 * count) as u64)?,
    };
    let lwe_in = if lwe_in.is_empty() {
        gpu.upload("lwe in", bytemuck::cast_slice(&[0u32]), wgpu::BufferUsages::empty())?
    } else {
        gpu.upload("lwe in", bytemuck::cast_slice(lwe_in), wgpu::BufferUsages::empty())?
    };
    Ok(Group {
        lwe_in,
        work: gpu.scratch("work", work_bytes)?,
        ext,
        lwe_out: gpu.scratch("lwe out", ((p.n() + 1) * 4 * count) as u64)?,
        count: count as u32,
    })
}

pub(super) fn decode_lwe(set: ParamSet, tag: KeyTag, bytes: &[u8]) -> Result<Vec<LweCiphertext>> {
    let words: Vec<u32> = bytemuck::pod_collect_to_vec(bytes);
    words.chunks(set.params().n() + 1).map(|w| LweCiphertext::from_raw(set, tag, w.to_vec())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_ranges_cover_every_chunk_in_order() {
        let r = dispatch_ranges(&[(0, 10), (10, 13)], 4, 7);
        let want: Vec<(usize, [u32; 4])> =
            vec![(0, [0, 4, 7, 0]), (0, [4, 8, 7, 0]), (0, [8, 10, 7, 0]), (1, [10, 13, 7, 10])];
        assert_eq!(r, want);
        assert!(dispatch_ranges(&[], 4, 0).is_empty());
    }
}
