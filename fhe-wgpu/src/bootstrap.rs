//! Resident keys and the bootstrap kernels: blind rotation (GINX, ternary secrets),
//! sample extraction and key switching, one workgroup per ciphertext
//! (`shaders/bootstrap.wgsl`).
//!
//! The keys are uploaded once by [`prepare`]. A key larger than one storage binding
//! (the 54-bit set's bootstrap key is 364 MB; lavapipe binds 128 MiB) is split into
//! chunks of whole LWE coefficients (bootstrap key) or ring coefficients
//! (key-switching key). A batch runs a few dispatches per chunk, each over a range of
//! coefficients short enough for llvmpipe's loop limit, all in one submission, with
//! the accumulators resident between them.

use fhe_api::{Error, EvaluationKey, ExtractedLwe, KeyTag, Lut, LweCiphertext, ParamSet, Result};

use crate::device::{layout_entries, Binding, Gpu};
use crate::ring::{self, Mont, WG};

/// A set's compiled kernels, layouts and constant tables.
pub struct Pipelines {
    pub set: ParamSet,
    pub mont: Mont,
    pub tables: wgpu::Buffer,
    pub ntt_layout: wgpu::BindGroupLayout,
    pub ntt_forward: wgpu::ComputePipeline,
    pub ntt_inverse: wgpu::ComputePipeline,
    pub bs_layout: wgpu::BindGroupLayout,
    pub blind_rotate: wgpu::ComputePipeline,
    pub key_switch: wgpu::ComputePipeline,
    /// The sign table (`Lut::sign`), resident so a gate uploads no table.
    pub sign_lut: wgpu::Buffer,
}

fn pipeline(
    gpu: &Gpu,
    layout: &wgpu::BindGroupLayout,
    module: &wgpu::ShaderModule,
    entry: &str,
) -> wgpu::ComputePipeline {
    let pl = gpu.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(entry),
        bind_group_layouts: &[Some(layout)],
        immediate_size: 0,
    });
    gpu.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(&pl),
        module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    })
}

impl Pipelines {
    pub fn new(gpu: &Gpu, set: ParamSet) -> Result<Pipelines> {
        let p = set.params();
        let mont = Mont::new(p.q_ring());
        let tables =
            gpu.upload("tables", bytemuck::cast_slice(&ring::tables(p, &mont)), wgpu::BufferUsages::empty())?;
        let sign_lut = upload_lut(gpu, &Lut::sign(set))?;
        gpu.scoped(&format!("{set} shader compilation"), || {
            let module = |label: &str, body: &str| {
                gpu.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(label),
                    source: wgpu::ShaderSource::Wgsl(ring::shader(set, &mont, body).into()),
                })
            };
            let ntt_module = module("ntt", ring::NTT);
            let ntt_layout = gpu.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("ntt"),
                entries: &layout_entries(&[Binding::Read, Binding::ReadWrite]),
            });
            let bs_module = module("bootstrap", ring::BOOTSTRAP);
            let bs_layout = gpu.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("bootstrap"),
                entries: &layout_entries(&[
                    Binding::Read,
                    Binding::Read,
                    Binding::Read,
                    Binding::Read,
                    Binding::ReadWrite,
                    Binding::ReadWrite,
                    Binding::ReadWrite,
                    Binding::Uniform,
                    Binding::Read,
                ]),
            });
            Pipelines {
                set,
                ntt_forward: pipeline(gpu, &ntt_layout, &ntt_module, "forward"),
                ntt_inverse: pipeline(gpu, &ntt_layout, &ntt_module, "inverse"),
                blind_rotate: pipeline(gpu, &bs_layout, &bs_module, "blind_rotate"),
                key_switch: pipeline(gpu, &bs_layout, &bs_module, "key_switch"),
                ntt_layout,
                bs_layout,
                mont,
                tables,
                sign_lut,
            }
        })
    }
}

/// A look-up table's coefficients as the shader reads them (plain residues, like the
/// accumulator).
fn upload_lut(gpu: &Gpu, lut: &Lut) -> Result<wgpu::Buffer> {
    gpu.upload("look-up table", bytemuck::cast_slice(lut.coefficients()), wgpu::BufferUsages::empty())
}

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
fn runs(total: usize, bytes_each: u64, max: u64, multiple: usize) -> Result<Vec<(usize, usize)>> {
    let fit = (max / bytes_each) as usize / multiple * multiple;
    if fit == 0 {
        return Err(Error::InvalidInput(format!(
            "one key unit of {bytes_each} bytes does not fit this adapter's {max}-byte storage binding"
        )));
    }
    Ok((0..total).step_by(fit).map(|lo| (lo, (lo + fit).min(total))).collect())
}

/// Runs `f(index, item)` over `out` split across the machine's cores.
fn par_fill<T: Send>(out: &mut [T], per: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let units = out.len() / per;
    let per_thread = units.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (t, block) in out.chunks_mut(per_thread * per).enumerate() {
            let f = &f;
            s.spawn(move || {
                for (i, unit) in block.chunks_mut(per).enumerate() {
                    f(t * per_thread + i, unit);
                }
            });
        }
    });
}

/// Expands the seeded halves on the host and uploads both keys once.
pub fn prepare(gpu: &Gpu, pipes: &Pipelines, ek: &EvaluationKey) -> Result<WgpuPrepared> {
    let set = ek.params();
    let p = set.params();
    let (big_n, rows, n) = (p.big_n(), p.rgsw_rows(), p.n());
    let per_key = rows * big_n;
    let max = gpu.max_binding();
    let mut bsk = Vec::new();
    // Two RGSW keys (s = +1, s = -1) per LWE coefficient.
    for (lo, hi) in runs(n, 2 * 2 * per_key as u64 * 8, max, 1)? {
        let mut host = vec![0u64; (hi - lo) * 2 * 2 * per_key];
        par_fill(&mut host, 2 * per_key, |k, out| ek.rgsw_key_rows(2 * lo + k, out, |x| pipes.mont.to_mont(x)));
        let buf = gpu.upload("bootstrap key", bytemuck::cast_slice(&host), wgpu::BufferUsages::empty())?;
        bsk.push(Chunk { lo: lo as u32, hi: hi as u32, buf });
    }
    // Key-switching samples of ring coefficient j: an even count of j per chunk keeps
    // each chunk's start on a whole packed word.
    let per_j = p.ksk_levels.0 * (p.ksk_base() as usize - 1);
    let mut ksk = Vec::new();
    for (lo, hi) in runs(big_n, (per_j * (n + 1) * 2) as u64, max, 2)? {
        let words = (hi - lo) * per_j * (n + 1);
        let mut host = vec![0u16; words + words % 2];
        par_fill(&mut host[..words], per_j * (n + 1), |jj, out| ek.ksk_rows(lo + jj, out));
        let buf = gpu.upload("key-switching key", bytemuck::cast_slice(&host), wgpu::BufferUsages::empty())?;
        ksk.push(Chunk { lo: lo as u32, hi: hi as u32, buf });
    }
    tracing::debug!(%set, bsk_chunks = bsk.len(), ksk_chunks = ksk.len(), "wgpu key resident");
    Ok(WgpuPrepared { bsk, ksk, tag: ek.tag() })
}

/// What one group's submission computes and reads back.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Blind rotation and extraction: read back the extracted samples.
    BlindRotate,
    /// Key switch of uploaded extracted samples, plus `add` on `b`.
    KeySwitch { add: u32 },
    /// Everything, plus `add` on `b`.
    Bootstrap { add: u32 },
}

/// Device buffers of one group of ciphertexts.
struct Group {
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
const LOOP_BUDGET: usize = 1 << 15;

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

/// Ring coefficients one key-switch dispatch may cover (even, like the key chunks).
fn key_switch_span(set: ParamSet) -> usize {
    let p = set.params();
    let levels = p.ksk_levels.0;
    let logq = p.lwe_modulus_log.0 as usize;
    let per = |work: usize| work.div_ceil(WG as usize);
    // Per coefficient: the digit pass (with ms_to_q's bit loop) and, for each output
    // word an invocation owns, one iteration per digit.
    let per_j = per(levels) * (1 + logq) + per(p.n() + 1) * levels + 1;
    ((LOOP_BUDGET - per(p.n() + 1) * (2 + logq)) / per_j / 2 * 2).max(2)
}

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
fn run_group(
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
        let span = ((LOOP_BUDGET - 2 * (set.params().big_n() / WG as usize + 1)) / iterations_per_step(set)).max(1);
        for (ci, r) in dispatch_ranges(&bounds(&key.bsk), span, 0) {
            ranges.push((true, ci, gpu.uniform("range", &r)?));
        }
    }
    if let Stage::KeySwitch { add } | Stage::Bootstrap { add } = stage {
        for (ci, r) in dispatch_ranges(&bounds(&key.ksk), key_switch_span(set), add) {
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
fn group_size(gpu: &Gpu, set: ParamSet) -> usize {
    let p = set.params();
    let work_bytes = ((2 + p.rgsw_rows()) * p.big_n() * 8) as u64;
    ((gpu.max_binding() / work_bytes) as usize).clamp(1, 4096)
}

fn group_buffers(gpu: &Gpu, set: ParamSet, count: usize, lwe_in: &[u32], ext_in: Option<&[u64]>) -> Result<Group> {
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

fn decode_lwe(set: ParamSet, tag: KeyTag, bytes: &[u8]) -> Result<Vec<LweCiphertext>> {
    let words: Vec<u32> = bytemuck::pod_collect_to_vec(bytes);
    words.chunks(set.params().n() + 1).map(|w| LweCiphertext::from_raw(set, tag, w.to_vec())).collect()
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
    fn dispatch_ranges_cover_every_chunk_in_order() {
        let r = dispatch_ranges(&[(0, 10), (10, 13)], 4, 7);
        let want: Vec<(usize, [u32; 4])> =
            vec![(0, [0, 4, 7, 0]), (0, [4, 8, 7, 0]), (0, [8, 10, 7, 0]), (1, [10, 13, 7, 10])];
        assert_eq!(r, want);
        assert!(dispatch_ranges(&[], 4, 0).is_empty());
    }

    /// Every set's shaders parse and validate with 64-bit integers, through the naga
    /// that wgpu compiles them with: a check that needs no adapter, so it runs where
    /// the byte tests skip.
    #[test]
    fn every_shader_validates_without_an_adapter() {
        use wgpu::naga::valid::{Capabilities, ValidationFlags, Validator};
        for set in ParamSet::ALL {
            let mont = Mont::new(set.params().q_ring());
            for (name, body) in [("bootstrap", ring::BOOTSTRAP), ("ntt", ring::NTT)] {
                let module = wgpu::naga::front::wgsl::parse_str(&ring::shader(set, &mont, body))
                    .unwrap_or_else(|e| panic!("{set} {name}: {e}"));
                Validator::new(ValidationFlags::all(), Capabilities::SHADER_INT64)
                    .validate(&module)
                    .unwrap_or_else(|e| panic!("{set} {name}: {e:?}"));
            }
        }
    }

    #[test]
    fn every_set_fits_the_loop_budget() {
        for set in ParamSet::ALL {
            let per = iterations_per_step(set);
            assert!(per < LOOP_BUDGET / 4, "{set}: {per} iterations per step");
            let span = key_switch_span(set);
            assert!(span >= 2 && span.is_multiple_of(2), "{set}: key-switch span {span}");
        }
    }
}
