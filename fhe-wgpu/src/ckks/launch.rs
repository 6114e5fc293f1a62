//! How a CKKS operation reaches the device: one shader module of run-time-prime kernels
//! (`shaders/ckks/`: `rns`, `ntt`, `eltwise`, `rescale`, `convert`, `keyswitch`; one
//! bind-group layout for all), the argument block they share ([`Args`]), and [`Ctx`],
//! which records an operation's dispatches and submits them in one compute pass. wgpu orders dispatches of a pass and keeps every buffer a
//! recorded bind group names alive until the device is done with it, so an operation
//! needs no synchronize: only a download waits.

use std::cell::RefCell;

use fhe_api::{Error, Result};

use super::plan::PrimeTables;
use crate::device::{layout_entries, Binding, Gpu};

const RNS: &str = include_str!("../shaders/ckks/rns.wgsl");
const NTT: &str = include_str!("../shaders/ckks/ntt.wgsl");
const ELTWISE: &str = include_str!("../shaders/ckks/eltwise.wgsl");
const RESCALE: &str = include_str!("../shaders/ckks/rescale.wgsl");
const CONVERT: &str = include_str!("../shaders/ckks/convert.wgsl");
const KEYSWITCH: &str = include_str!("../shaders/ckks/keyswitch.wgsl");

/// Invocations per workgroup (`WG` in `rns.wgsl`).
pub(crate) const WG: u32 = 256;

/// Most workgroups in one dimension of a dispatch (WebGPU's default limit); the
/// element-wise kernels loop over the rest.
const MAX_GROUPS: u32 = 65_535;

/// The WGSL of the CKKS module: the shared helpers, then each kernel file.
pub(crate) fn shader_source() -> String {
    let mulhi = crate::ring::MULHI64;
    format!("{mulhi}\n{RNS}\n{NTT}\n{ELTWISE}\n{RESCALE}\n{CONVERT}\n{KEYSWITCH}")
}

/// The argument block of every CKKS kernel (`struct Args` in `rns.wgsl`): word offsets
/// and strides into the bound buffers, and the limb-to-prime map (`prime(l)`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Args {
    pub op: u32,
    pub parts: u32,
    pub limbs: u32,
    pub log_n: u32,
    pub first: u32,
    pub split: u32,
    pub hi: u32,
    pub out_off: u32,
    pub out_stride: u32,
    pub x_off: u32,
    pub x_stride: u32,
    pub y_off: u32,
    pub y_stride: u32,
    pub y_split: u32,
    pub yhi_off: u32,
    pub z_off: u32,
    pub z_stride: u32,
    pub a_off: u32,
    pub b_off: u32,
    pub gather: u32,
    pub aux: [u32; 4],
    /// More output offsets (the inner product's `u1`, `u0` and `u1` over `P`).
    pub w: [u32; 4],
}

/// The kernels of the CKKS module.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kernel {
    NttForward,
    NttInverse,
    Eltwise,
    Center,
    ModUp,
    ModDown,
    InnerProduct,
}

/// The compiled CKKS module: built once per backend (no prime or ring is compiled in).
pub(crate) struct Kernels {
    layout: wgpu::BindGroupLayout,
    pipelines: Vec<wgpu::ComputePipeline>,
    /// Bound where a kernel reads no operand (every slot needs a buffer).
    dummy: wgpu::Buffer,
}

/// Entry points, in [`Kernel`]'s order (a pipeline's index is its kernel's number).
const ENTRIES: [&str; 7] = ["ntt_forward", "ntt_inverse", "eltwise", "center", "mod_up", "mod_down", "inner_product"];

impl Kernels {
    pub(crate) fn new(gpu: &Gpu) -> Result<Kernels> {
        let dummy = gpu.upload("ckks dummy operand", &[0u8; 16], wgpu::BufferUsages::empty())?;
        gpu.scoped("CKKS shader compilation", || {
            let module = gpu.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("ckks"),
                source: wgpu::ShaderSource::Wgsl(shader_source().into()),
            });
            let mut kinds = vec![Binding::Read, Binding::ReadWrite];
            kinds.extend([Binding::Read; 6]);
            kinds.push(Binding::Uniform);
            let layout = gpu.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("ckks"),
                entries: &layout_entries(&kinds),
            });
            let pl = gpu.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("ckks"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let pipelines = ENTRIES
                .iter()
                .map(|entry| {
                    gpu.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(entry),
                        layout: Some(&pl),
                        module: &module,
                        entry_point: Some(entry),
                        compilation_options: Default::default(),
                        cache: None,
                    })
                })
                .collect();
            Kernels { layout, pipelines, dummy }
        })
    }
}

/// The buffers of one dispatch, by binding (`rns.wgsl`); `None` binds the dummy.
#[derive(Clone, Copy, Default)]
pub(crate) struct Bind<'b> {
    pub out: Option<&'b wgpu::Buffer>,
    pub x: Option<&'b wgpu::Buffer>,
    pub y: Option<&'b wgpu::Buffer>,
    pub yhi: Option<&'b wgpu::Buffer>,
    pub z: Option<&'b wgpu::Buffer>,
    pub index: Option<&'b wgpu::Buffer>,
    pub sc: Option<&'b wgpu::Buffer>,
}

struct Step {
    kernel: Kernel,
    bind: wgpu::BindGroup,
    groups: u32,
}

/// One operation's recorded dispatches, over one table of primes.
pub(crate) struct Ctx<'a> {
    pub gpu: &'a Gpu,
    pub table: &'a PrimeTables,
    kernels: &'a Kernels,
    steps: RefCell<Vec<Step>>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(gpu: &'a Gpu, kernels: &'a Kernels, table: &'a PrimeTables) -> Ctx<'a> {
        Ctx { gpu, table, kernels, steps: RefCell::new(Vec::new()) }
    }

    pub(crate) fn n(&self) -> usize {
        self.table.n
    }

    /// The arguments every kernel starts from: `parts` parts of `limbs` limbs over
    /// `q_0..`, operands laid out like the output.
    pub(crate) fn args(&self, parts: usize, limbs: usize) -> Args {
        let stride = (limbs * self.n()) as u32;
        Args {
            parts: parts as u32,
            limbs: limbs as u32,
            log_n: self.table.n.trailing_zeros(),
            split: limbs as u32,
            out_stride: stride,
            x_stride: stride,
            y_stride: stride,
            y_split: limbs as u32,
            z_stride: stride,
            ..Args::default()
        }
    }

    /// A new device buffer of `words` words (zeroed).
    pub(crate) fn alloc(&self, words: usize) -> Result<wgpu::Buffer> {
        self.gpu.scratch("ckks polynomial", (words * 8) as u64)
    }

    /// Host words as a read-only device buffer (scalars of one dispatch).
    pub(crate) fn upload(&self, words: &[u64]) -> Result<wgpu::Buffer> {
        upload_words(self.gpu, "ckks scalars", words)
    }

    /// Records one dispatch of `kernel`: the NTTs take one workgroup per transform
    /// (`work` transforms), the others a grid over `work` words.
    pub(crate) fn run(&self, kernel: Kernel, args: &Args, b: Bind<'_>, work: usize) -> Result<()> {
        if work == 0 {
            return Ok(());
        }
        let groups = match kernel {
            Kernel::NttForward | Kernel::NttInverse => u32::try_from(work)
                .ok()
                .filter(|&g| g <= MAX_GROUPS)
                .ok_or_else(|| Error::InvalidInput(format!("{work} transforms in one dispatch")))?,
            _ => work.div_ceil(WG as usize).min(MAX_GROUPS as usize) as u32,
        };
        // The shaders index words in 32 bits, with room for one grid stride past the end.
        let words = match kernel {
            Kernel::NttForward | Kernel::NttInverse => work as u64 * self.n() as u64,
            _ => work as u64,
        };
        if words + (MAX_GROUPS * WG) as u64 > u32::MAX as u64 {
            return Err(Error::InvalidInput(format!("{words} words in one dispatch (32-bit word indices)")));
        }
        let uniform = self.gpu.scoped("ckks arguments", || {
            wgpu::util::DeviceExt::create_buffer_init(
                &self.gpu.device,
                &wgpu::util::BufferInitDescriptor {
                    label: Some("ckks arguments"),
                    contents: bytemuck::bytes_of(args),
                    usage: wgpu::BufferUsages::UNIFORM,
                },
            )
        })?;
        let d = &self.kernels.dummy;
        let out = b.out.ok_or_else(|| Error::InvalidInput("a CKKS dispatch without an output".into()))?;
        let slots = [Some(&self.table.buf), Some(out), b.x, b.y, b.yhi, b.z, b.index, b.sc];
        let mut entries: Vec<wgpu::BindGroupEntry> = slots
            .iter()
            .enumerate()
            .map(|(i, s)| wgpu::BindGroupEntry { binding: i as u32, resource: s.unwrap_or(d).as_entire_binding() })
            .collect();
        entries.push(wgpu::BindGroupEntry { binding: 8, resource: uniform.as_entire_binding() });
        let bind = self.gpu.scoped("ckks bind group", || {
            self.gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("ckks"),
                layout: &self.kernels.layout,
                entries: &entries,
            })
        })?;
        self.steps.borrow_mut().push(Step { kernel, bind, groups });
        Ok(())
    }

    /// `transforms` NTTs in place over `data` from word `off`, transform `t` over limb
    /// `t % limbs` of the map in `base` (`first`, `split`, `hi`).
    pub(crate) fn ntt(
        &self,
        data: &wgpu::Buffer,
        off: usize,
        base: &Args,
        transforms: usize,
        forward: bool,
    ) -> Result<()> {
        let a = Args { out_off: off as u32, ..*base };
        let kernel = if forward { Kernel::NttForward } else { Kernel::NttInverse };
        // Chunks of whole runs of `limbs` transforms, so `t % limbs` keeps its meaning.
        let limbs = (a.limbs as usize).max(1);
        let step = (MAX_GROUPS as usize / limbs).max(1) * limbs;
        for start in (0..transforms).step_by(step) {
            let count = (transforms - start).min(step);
            let a = Args { out_off: a.out_off + (start * self.n()) as u32, ..a };
            self.run(kernel, &a, Bind { out: Some(data), ..Bind::default() }, count)?;
        }
        Ok(())
    }

    /// Submits the recorded dispatches in one compute pass.
    pub(crate) fn submit(self) -> Result<()> {
        let steps = self.steps.into_inner();
        if steps.is_empty() {
            return Ok(());
        }
        let mut encoder = self.gpu.encoder();
        self.gpu.scoped("ckks submission", || {
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                for s in &steps {
                    pass.set_pipeline(&self.kernels.pipelines[s.kernel as usize]);
                    pass.set_bind_group(0, &s.bind, &[]);
                    pass.dispatch_workgroups(s.groups, 1, 1);
                }
            }
            self.gpu.queue.submit([encoder.finish()]);
        })
    }
}

/// Host words into a device buffer the CKKS kernels read and copies can use.
pub(crate) fn upload_words(gpu: &Gpu, label: &str, words: &[u64]) -> Result<wgpu::Buffer> {
    if words.is_empty() {
        return gpu.upload(label, &[0u8; 8], wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST);
    }
    gpu.upload(label, bytemuck::cast_slice(words), wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST)
}

/// A device buffer's words, back on the host (waits for the device).
pub(crate) fn download_words(gpu: &Gpu, buf: &wgpu::Buffer) -> Result<Vec<u64>> {
    let bytes = gpu.submit_and_read(gpu.encoder(), buf)?;
    Ok(bytemuck::pod_collect_to_vec(&bytes))
}
