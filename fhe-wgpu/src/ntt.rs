//! Batched negacyclic NTTs: one workgroup per polynomial, stages in device memory.

use fhe_api::{ParamSet, Result};

use crate::device::Gpu;
use crate::ring::Pipelines;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Inverse,
}

/// Most polynomials per dispatch (the workgroup-count limit of one dimension).
const MAX_POLYS: usize = 65_535;

/// Transforms `data` (a whole number of polynomials, residues below Q) in place.
pub fn run(gpu: &Gpu, pipes: &Pipelines, set: ParamSet, data: &mut [u64], dir: Direction) -> Result<()> {
    let n = set.params().big_n();
    let by_binding = (gpu.max_binding() / (8 * n as u64)) as usize;
    let per_chunk = MAX_POLYS.min(by_binding).max(1);
    for chunk in data.chunks_mut(per_chunk * n) {
        let polys = (chunk.len() / n) as u32;
        let buf = gpu.upload("ntt data", bytemuck::cast_slice(chunk), wgpu::BufferUsages::COPY_SRC)?;
        let pipeline = match dir {
            Direction::Forward => &pipes.ntt_forward,
            Direction::Inverse => &pipes.ntt_inverse,
        };
        let mut encoder = gpu.encoder();
        gpu.scoped("ntt dispatch", || {
            let bind = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("ntt"),
                layout: &pipes.ntt_layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: pipes.tables.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: buf.as_entire_binding() },
                ],
            });
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(polys, 1, 1);
        })?;
        let bytes = gpu.submit_and_read(encoder, &buf)?;
        let words: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
        chunk.copy_from_slice(&words);
    }
    Ok(())
}
