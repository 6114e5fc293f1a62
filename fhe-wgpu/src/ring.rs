//! One parameter set on the device: its Montgomery constants, its tables in
//! Montgomery form, the WGSL source of its kernels (the set's numbers are compile-time
//! constants of the shader, so each set compiles its own pipelines) and those pipelines
//! ([`Pipelines`]: the NTT's here, the bit scheme's from `tfhe/`).

use fhe_api::ring::math::{bit_reverse, inv_mod, negacyclic_root, ntt_slot_exponent, pow_mod};
use fhe_api::ring::modulus::{csub, mul_shoup_lazy, shoup};
use fhe_api::tfhe::params::Params;
use fhe_api::{Lut, ParamSet, Result};

use crate::device::{layout_entries, Binding, Gpu};
use crate::tfhe;

const COMMON: &str = include_str!("shaders/common.wgsl");
const MONT32: &str = include_str!("shaders/mont32.wgsl");
const MONT64: &str = include_str!("shaders/mont64.wgsl");
/// `mulhi` for 64-bit words, shared by [`MONT64`] and the CKKS module.
pub(crate) const MULHI64: &str = include_str!("shaders/mulhi64.wgsl");
pub const NTT: &str = include_str!("shaders/ntt.wgsl");

/// Invocations per workgroup (WebGPU's default limit is 256).
pub const WG: u32 = 256;

/// Montgomery form with `R = 2^32` where `Q < 2^31` (one 64-bit product per
/// multiplication), else `R = 2^64`.
pub struct Mont {
    pub q: u64,
    pub log_r: u32,
    /// `Q^-1 mod R`.
    pub qinv: u64,
    /// `R mod Q`.
    pub r: u64,
    /// Shoup's companion of `r`, so conversion costs one high product.
    r_shoup: u64,
}

impl Mont {
    pub fn new(q: u64) -> Mont {
        let log_r = if q < (1 << 31) { 32 } else { 64 };
        // Newton iteration: each step doubles the correct low bits of Q^-1 mod 2^64.
        let mut inv: u64 = 1;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(q.wrapping_mul(inv)));
        }
        let qinv = if log_r == 32 { inv & 0xffff_ffff } else { inv };
        let r = ((1u128 << log_r) % q as u128) as u64;
        Mont { q, log_r, qinv, r, r_shoup: shoup(r, q) }
    }

    /// `x R mod Q` (keys are converted once at prepare time, tens of millions of words).
    pub fn to_mont(&self, x: u64) -> u64 {
        csub(mul_shoup_lazy(x, self.r, self.r_shoup, self.q), self.q)
    }
}

/// A set's constant tables, as uploaded: see `shaders/common.wgsl` for the layout
/// (and `shaders/mont64.wgsl` for the 54-bit ring's plain twiddles).
pub fn tables(p: &Params, m: &Mont) -> Vec<u64> {
    let (q, n) = (p.q_ring(), p.big_n());
    let log_n = n.trailing_zeros();
    let psi = negacyclic_root(q, n).expect("parameter sets are validated: Q prime, Q = 1 mod 2N");
    let ipsi = inv_mod(psi, q);
    let twiddles: Vec<u64> = (0..n)
        .map(|k| pow_mod(psi, bit_reverse(k, log_n) as u64, q))
        .chain((0..n).map(|k| pow_mod(ipsi, bit_reverse(k, log_n) as u64, q)))
        .collect();
    let shoup_twiddles = m.log_r == 64;
    let mut t = Vec::with_capacity(7 * n);
    if shoup_twiddles {
        t.extend(&twiddles);
    } else {
        t.extend(twiddles.iter().map(|&w| m.to_mont(w)));
    }
    t.extend((0..2 * n as u64).map(|e| m.to_mont(pow_mod(psi, e, q))));
    t.extend((0..n).map(|k| ntt_slot_exponent(k, log_n) as u64));
    if shoup_twiddles {
        // `tw_mul` of `shaders/mont64.wgsl`.
        t.extend(twiddles.iter().map(|&w| shoup(w, q)));
    }
    t
}

/// The WGSL of one kernel file for `set`: the set's constants, the arithmetic, the
/// shared NTT stages, then `body`.
pub fn shader(set: ParamSet, m: &Mont, body: &str) -> String {
    let p = set.params();
    let q = p.q_ring();
    let n = p.big_n() as u32;
    let two_n = 2 * n;
    let ninv = inv_mod(n as u64, q);
    let header = format!(
        "// Generated constants of {name}.\n\
         const N: u32 = {n}u;\n\
         const LOG_N: u32 = {log_n}u;\n\
         const TWO_N: u32 = {two_n}u;\n\
         const LOG_2N: u32 = {log_2n}u;\n\
         const L: u32 = {l}u;\n\
         const ROWS: u32 = {rows}u;\n\
         const LOG_BG: u32 = {log_bg}u;\n\
         const BG: i64 = {bg}li;\n\
         const LWE_N: u32 = {lwe_n}u;\n\
         const LOGQ: u32 = {logq}u;\n\
         const LWE_MASK: u32 = {mask}u;\n\
         const KS_LOG_B: u32 = {ks_log_b}u;\n\
         const KS_B: u32 = {ks_b}u;\n\
         const KS_LEVELS: u32 = {ks_levels}u;\n\
         const Q: u64 = {q}lu;\n\
         const Q_I: i64 = {q}li;\n\
         const HALF_Q: u64 = {half_q}lu;\n\
         const QINV: u64 = {qinv}lu;\n\
         const ONE_R: u64 = {one_r}lu;\n\
         const NINV_R: u64 = {ninv_r}lu;\n\
         const WG: u32 = {wg}u;\n",
        name = set.name(),
        log_n = n.trailing_zeros(),
        log_2n = two_n.trailing_zeros(),
        l = p.bsk_levels.0,
        rows = p.rgsw_rows(),
        log_bg = p.bsk_base_log.0,
        bg = p.bsk_base(),
        lwe_n = p.n(),
        logq = p.lwe_modulus_log.0,
        mask = p.q_lwe_mask(),
        ks_log_b = p.ksk_base_log.0,
        ks_b = p.ksk_base(),
        ks_levels = p.ksk_levels.0,
        half_q = q / 2,
        qinv = m.qinv,
        one_r = m.r,
        ninv_r = m.to_mont(ninv),
        wg = WG,
    );
    let arith = if m.log_r == 32 { MONT32.to_string() } else { format!("{MULHI64}\n{MONT64}") };
    format!("{header}\n{arith}\n{COMMON}\n{body}")
}

/// A set's compiled kernels, layouts and constant tables.
pub struct Pipelines {
    pub set: ParamSet,
    pub mont: Mont,
    pub tables: wgpu::Buffer,
    pub ntt_layout: wgpu::BindGroupLayout,
    pub ntt_forward: wgpu::ComputePipeline,
    pub ntt_inverse: wgpu::ComputePipeline,
    /// The bit scheme's bindings (`shaders/tfhe/bindings.wgsl`), for both kernels below.
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
        let tables = gpu.upload("tables", bytemuck::cast_slice(&tables(p, &mont)), wgpu::BufferUsages::empty())?;
        let sign_lut = tfhe::bootstrap::upload_lut(gpu, &Lut::sign(set))?;
        gpu.scoped(&format!("{set} shader compilation"), || {
            let module = |label: &str, body: &str| {
                gpu.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(label),
                    source: wgpu::ShaderSource::Wgsl(shader(set, &mont, body).into()),
                })
            };
            let ntt_module = module("ntt", NTT);
            let ntt_layout = gpu.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("ntt"),
                entries: &layout_entries(&[Binding::Read, Binding::ReadWrite]),
            });
            // Two modules, one layout: the host binds the same group to both.
            let bs_module = module("bootstrap", &tfhe::bootstrap::shader_body());
            let ks_module = module("keyswitch", &tfhe::keyswitch::shader_body());
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
                key_switch: pipeline(gpu, &bs_layout, &ks_module, "key_switch"),
                ntt_layout,
                bs_layout,
                mont,
                tables,
                sign_lut,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn montgomery_constants_are_inverses() {
        for set in ParamSet::ALL {
            let m = Mont::new(set.params().q_ring());
            let r_mask = if m.log_r == 64 { u64::MAX } else { (1u64 << m.log_r) - 1 };
            assert_eq!(m.q.wrapping_mul(m.qinv) & r_mask, 1, "{set}");
            assert_eq!(m.to_mont(1), m.r, "{set}");
            assert!(m.r < m.q);
            for x in [0, 1, 2, m.q / 2, m.q - 1] {
                assert_eq!(m.to_mont(x) as u128, ((x as u128) << m.log_r) % m.q as u128, "{set} x={x}");
            }
        }
    }

    /// Every set's shaders parse and validate with 64-bit integers, through the naga
    /// that wgpu compiles them with: a check that needs no adapter, so it runs where
    /// the byte tests skip.
    #[test]
    fn every_shader_validates_without_an_adapter() {
        use wgpu::naga::valid::{Capabilities, ValidationFlags, Validator};
        let bodies = [
            ("bootstrap", tfhe::bootstrap::shader_body()),
            ("keyswitch", tfhe::keyswitch::shader_body()),
            ("ntt", NTT.into()),
        ];
        // The CKKS module has no set constants: one source for every ring.
        let ckks = wgpu::naga::front::wgsl::parse_str(&crate::ckks::launch::shader_source())
            .unwrap_or_else(|e| panic!("ckks: {e}"));
        Validator::new(ValidationFlags::all(), Capabilities::SHADER_INT64)
            .validate(&ckks)
            .unwrap_or_else(|e| panic!("ckks: {e:?}"));
        for set in ParamSet::ALL {
            let mont = Mont::new(set.params().q_ring());
            for (name, body) in &bodies {
                let module = wgpu::naga::front::wgsl::parse_str(&shader(set, &mont, body))
                    .unwrap_or_else(|e| panic!("{set} {name}: {e}"));
                Validator::new(ValidationFlags::all(), Capabilities::SHADER_INT64)
                    .validate(&module)
                    .unwrap_or_else(|e| panic!("{set} {name}: {e:?}"));
            }
        }
    }
}
