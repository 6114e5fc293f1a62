//! The GPU backend, written once over [`GpuDriver`]: key generation and encryption are
//! host algorithms (`fhe-schemes`) over this NTT; the evaluation key is uploaded once by `prepare` and stays
//! resident; a batch is bootstrapped in two launches (blind rotation with extraction,
//! then key switching) and one copy back.

use std::sync::{Arc, Mutex};

use fhe_api::keyed_cache::KeyedCache;
use fhe_api::ops::{check_inputs, check_ring_input, KeyMeta, RingOps};
use fhe_api::ring::math::{ntt_slot_exponent, pow_mod};
use fhe_api::ring::ntt::NttTables;
use fhe_api::ring::{PolynomialSize, RingModulus};
use fhe_api::{
    Backend, BackendKind, BackendOptions, BootstrapOps, DeviceInfo, Error, EvaluationKey, ExtractedLwe, Lut,
    LweCiphertext, ParamSet, PreparedKey, Result,
};

use crate::args::{BlindRotateArgs, DevPtr, KeySwitchArgs, NttArgs, Residue};
use crate::driver::{Buffer, GpuDriver, LaunchShape};
use crate::source::{blind_rotate_shared, kernel_source, shoup_for, word_bits, Dialect};

/// The one NTT variant of the GPU kernels (radix-2, Shoup butterflies, shared memory).
pub const GPU_NTT_VARIANT: &str = "radix2";

/// Ciphertexts per launch: bounds the workspace (`(2 + 2L) N` words per ciphertext).
const MAX_LAUNCH_BATCH: usize = 2048;

/// Residues on the device in the kernels' word size for one set (`word_bits`).
enum Residues<D: GpuDriver> {
    W32(Buffer<D, u32>),
    W64(Buffer<D, u64>),
}

impl<D: GpuDriver> Residues<D> {
    /// Uploads `data` (residues below Q) as words of `bits` bits.
    fn upload(drv: &Arc<D>, data: &[u64], bits: u32) -> Result<Self> {
        Ok(if bits == 32 {
            let narrow: Vec<u32> = data.iter().map(|&x| x as u32).collect();
            Residues::W32(Buffer::from_slice(drv, &narrow)?)
        } else {
            Residues::W64(Buffer::from_slice(drv, data)?)
        })
    }

    fn zeroed(drv: &Arc<D>, len: usize, bits: u32) -> Result<Self> {
        Ok(if bits == 32 { Residues::W32(Buffer::new(drv, len)?) } else { Residues::W64(Buffer::new(drv, len)?) })
    }

    fn dev_ptr(&self) -> DevPtr<Residue> {
        DevPtr::new(match self {
            Residues::W32(b) => b.ptr(),
            Residues::W64(b) => b.ptr(),
        })
    }

    fn read_into(&self, out: &mut [u64]) -> Result<()> {
        match self {
            Residues::W32(b) => {
                let mut narrow = vec![0u32; out.len()];
                b.read_into(&mut narrow)?;
                out.iter_mut().zip(narrow).for_each(|(o, x)| *o = u64::from(x));
                Ok(())
            }
            Residues::W64(b) => b.read_into(out),
        }
    }
}

/// One parameter set on one device: the compiled module and the resident tables.
struct RingState<D: GpuDriver> {
    module: D::Module,
    psi: Residues<D>,
    psi_shoup: Residues<D>,
    ipsi: Residues<D>,
    ipsi_shoup: Residues<D>,
    psi_pow: Residues<D>,
    slot_exp: Buffer<D, u32>,
    /// The sign table (`Lut::sign`), resident so a gate uploads no table.
    sign_lut: Residues<D>,
}

/// An evaluation key resident on the device.
pub struct GpuPrepared<D: GpuDriver> {
    /// `[key][row][half][slot]`, half 0 = `a` (expanded from the seed), half 1 = `b`,
    /// in the set's word size.
    bsk: Residues<D>,
    /// `[sample][n + 1]`, `a` then `b`, as 16-bit words.
    ksk: Buffer<D, u16>,
}

/// A backend over one device of driver `D`.
pub struct GpuBackend<D: GpuDriver> {
    drv: Arc<D>,
    dialect: Dialect,
    rings: KeyedCache<ParamSet, RingState<D>>,
    /// Device work is issued by one caller at a time (one stream).
    lock: Mutex<()>,
}

impl<D: GpuDriver> GpuBackend<D> {
    /// Wraps a driver; `options.ntt_variant` must be `None` or [`GPU_NTT_VARIANT`].
    pub fn new(drv: D, dialect: Dialect, options: &BackendOptions) -> Result<Self> {
        if let Some(v) = options.ntt_variant.as_deref() {
            if v != GPU_NTT_VARIANT {
                return Err(Error::UnknownNttVariant {
                    backend: drv.kind(),
                    value: v.to_string(),
                    valid: GPU_NTT_VARIANT.to_string(),
                });
            }
        }
        Ok(GpuBackend { drv: Arc::new(drv), dialect, rings: Default::default(), lock: Mutex::new(()) })
    }

    pub fn driver(&self) -> &Arc<D> {
        &self.drv
    }

    fn device_err(&self, detail: impl std::fmt::Display) -> Error {
        Error::Device { backend: self.drv.kind(), detail: detail.to_string() }
    }

    /// The set's module and tables, compiled and uploaded on first use (cached for the
    /// life of this backend, i.e. per device context). A failure is not cached: the next
    /// call compiles again and reports its own error.
    fn ring(&self, set: ParamSet) -> Result<Arc<RingState<D>>> {
        self.rings.get_or_try_init(&set, || self.build_ring(set)).map_err(|e| self.device_err(format!("{set}: {e}")))
    }

    fn build_ring(&self, set: ParamSet) -> Result<RingState<D>> {
        let p = set.params();
        let t = NttTables::for_params(p);
        let q = p.q_ring();
        let two_n = 2 * p.big_n() as u64;
        let psi_pow: Vec<u64> = (0..two_n).map(|e| pow_mod(t.psi, e, q)).collect();
        let slot_exp: Vec<u32> = (0..p.big_n()).map(|k| ntt_slot_exponent(k, t.log_n) as u32).collect();
        let started = std::time::Instant::now();
        let module = self.drv.compile(set, &kernel_source(set, self.dialect))?;
        tracing::info!(backend = %self.drv.kind(), %set, ms = started.elapsed().as_millis() as u64, "kernels compiled");
        let bits = word_bits(set);
        let companions = |w: &[u64]| w.iter().map(|&x| shoup_for(x, q, bits)).collect::<Vec<u64>>();
        Ok(RingState {
            module,
            psi: Residues::upload(&self.drv, &t.psi_rev, bits)?,
            psi_shoup: Residues::upload(&self.drv, &companions(&t.psi_rev), bits)?,
            ipsi: Residues::upload(&self.drv, &t.ipsi_rev, bits)?,
            ipsi_shoup: Residues::upload(&self.drv, &companions(&t.ipsi_rev), bits)?,
            psi_pow: Residues::upload(&self.drv, &psi_pow, bits)?,
            slot_exp: Buffer::from_slice(&self.drv, &slot_exp)?,
            sign_lut: Residues::upload(&self.drv, Lut::sign(set).coefficients(), bits)?,
        })
    }

    /// Threads per block for a kernel with `work` independent items per barrier phase.
    fn block_for(&self, work: usize) -> u32 {
        let warp = self.drv.warp_size().max(1);
        let max = (self.drv.max_block() / warp).max(1) * warp;
        let want = (work as u32).div_ceil(warp) * warp;
        want.clamp(warp, max)
    }

    fn ntt(&self, set: ParamSet, data: &mut [u64], forward: bool) -> Result<()> {
        let p = set.params();
        check_ring_input(p.ring_degree, p.ring_modulus, data)?;
        let n = set.params().big_n();
        let count = data.len() / n;
        if count == 0 {
            return Ok(());
        }
        let ring = self.ring(set)?;
        let _guard = self.lock.lock().map_err(|_| self.device_err("device lock poisoned"))?;
        let bits = word_bits(set);
        let buf = Residues::upload(&self.drv, data, bits)?;
        let (tw, tw_shoup) = if forward { (&ring.psi, &ring.psi_shoup) } else { (&ring.ipsi, &ring.ipsi_shoup) };
        let grid = launch_grid(count)?;
        let args = NttArgs {
            data: buf.dev_ptr(),
            twiddles: tw.dev_ptr(),
            twiddles_shoup: tw_shoup.dev_ptr(),
            count: grid,
            inverse: u32::from(!forward),
        };
        let shape = LaunchShape { grid, block: self.block_for(n / 2), shared_bytes: (n * bits as usize / 8) as u32 };
        // SAFETY: `buf` holds `count` polynomials, the tables N words each, as the NTT
        // kernels read; everything stays alive until `synchronize` below returns.
        unsafe { self.drv.launch(&ring.module, shape, &args)? };
        self.drv.synchronize()?;
        buf.read_into(data)
    }

    /// Blind rotation (+ extraction) of `inputs` with test polynomial `lut` (N residues of
    /// this set, resident until the call returns) into `out` (device, `(N+1)` words each).
    fn launch_blind_rotate(
        &self,
        ring: &RingState<D>,
        key: &GpuPrepared<D>,
        set: ParamSet,
        inputs: &[LweCiphertext],
        lut: DevPtr<Residue>,
        out: &Buffer<D, u64>,
    ) -> Result<()> {
        let p = set.params();
        let (n_ring, rows) = (p.big_n(), p.rgsw_rows());
        let words: Vec<u32> = inputs.iter().flat_map(|c| c.as_words().iter().copied()).collect();
        let input = Buffer::from_slice(&self.drv, &words)?;
        let (digits_in_shared, shared_bytes) = blind_rotate_shared(set);
        let per_ct = if digits_in_shared { 2 * n_ring } else { (2 + rows) * n_ring };
        let workspace = Residues::<D>::zeroed(&self.drv, inputs.len() * per_ct, word_bits(set))?;
        let grid = launch_grid(inputs.len())?;
        let args = BlindRotateArgs {
            input: input.dev_ptr(),
            bsk: key.bsk.dev_ptr(),
            psi: ring.psi.dev_ptr(),
            psi_shoup: ring.psi_shoup.dev_ptr(),
            ipsi: ring.ipsi.dev_ptr(),
            ipsi_shoup: ring.ipsi_shoup.dev_ptr(),
            psi_pow: ring.psi_pow.dev_ptr(),
            slot_exp: ring.slot_exp.dev_ptr(),
            workspace: workspace.dev_ptr(),
            output: out.dev_ptr(),
            lut,
            count: grid,
            reserved: 0,
        };
        let shape = LaunchShape { grid, block: self.block_for(n_ring), shared_bytes: shared_bytes as u32 };
        // SAFETY: sizes as documented on `BlindRotateArgs`: inputs (n+1) words each,
        // the key for this set, the tables and the look-up table (N words), (2 + 2L) N
        // words of workspace and N + 1 output words per ciphertext. The synchronize keeps `input`/`workspace` alive
        // until the kernel is done.
        unsafe { self.drv.launch(&ring.module, shape, &args)? };
        self.drv.synchronize()
    }

    fn launch_key_switch(
        &self,
        ring: &RingState<D>,
        key: &GpuPrepared<D>,
        set: ParamSet,
        input: &Buffer<D, u64>,
        count: usize,
        add: u32,
    ) -> Result<Vec<u32>> {
        let n = set.params().n();
        let out = Buffer::<D, u32>::new(&self.drv, count * (n + 1))?;
        let grid = launch_grid(count)?;
        let args =
            KeySwitchArgs { input: input.dev_ptr(), ksk: key.ksk.dev_ptr(), output: out.dev_ptr(), count: grid, add };
        let shape = LaunchShape { grid, block: self.block_for(n + 1), shared_bytes: 0 };
        // SAFETY: `input` holds `count` extracted samples of N + 1 words, the key this
        // set's samples, `out` count * (n + 1) words.
        unsafe { self.drv.launch(&ring.module, shape, &args)? };
        self.drv.synchronize()?;
        let mut words = vec![0u32; count * (n + 1)];
        out.read_into(&mut words)?;
        Ok(words)
    }

    fn prepared<'a>(&self, key: &'a PreparedKey) -> Result<&'a GpuPrepared<D>> {
        key.downcast::<GpuPrepared<D>>(&self.name())
    }
}

fn launch_grid(count: usize) -> Result<u32> {
    u32::try_from(count).map_err(|_| Error::InvalidInput(format!("batch of {count} is too large for one launch")))
}

impl<D: GpuDriver> GpuBackend<D> {
    /// The bit-scheme set of the ring `(n, q)`: the kernels are compiled per set, so an
    /// NTT over any other ring (a CKKS prime) is not on the device yet.
    fn set_of(&self, n: PolynomialSize, q: RingModulus) -> Result<ParamSet> {
        ParamSet::for_ring(n, q)
            .ok_or_else(|| Error::Unsupported { backend: self.name(), scheme: "NTT over an arbitrary ring (CKKS)" })
    }
}

impl<D: GpuDriver> RingOps for GpuBackend<D> {
    fn ring_forward(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        self.ntt(self.set_of(n, q)?, data, true)
    }

    fn ring_inverse(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        self.ntt(self.set_of(n, q)?, data, false)
    }

    fn ntt_variant(&self) -> &str {
        GPU_NTT_VARIANT
    }
}

impl<D: GpuDriver> BootstrapOps for GpuBackend<D> {
    fn prepare(&self, ek: &EvaluationKey) -> Result<PreparedKey> {
        let set = ek.params();
        let p = set.params();
        let per_key = 2 * p.rgsw_rows() * p.big_n();
        let mut bsk = vec![0u64; 2 * p.bsk_b_len()];
        bsk.chunks_mut(per_key).enumerate().for_each(|(key, out)| ek.rgsw_key_rows(key, out, |x| x));
        let per_j = p.ksk_levels.0 * (p.ksk_base() as usize - 1) * (p.n() + 1);
        let mut ksk = vec![0u16; p.ksk_samples() * (p.n() + 1)];
        ksk.chunks_mut(per_j).enumerate().for_each(|(j, out)| ek.ksk_rows(j, out));
        self.ring(set)?; // compile before the first gate, not during it
        let _guard = self.lock.lock().map_err(|_| self.device_err("device lock poisoned"))?;
        let prepared = GpuPrepared {
            bsk: Residues::upload(&self.drv, &bsk, word_bits(set))?,
            ksk: Buffer::from_slice(&self.drv, &ksk)?,
        };
        Ok(PreparedKey::new(self.name(), KeyMeta::of(ek), prepared))
    }

    /// The sign table is resident ([`RingState`]); any other is uploaded for the call.
    fn blind_rotate_batch_lut(
        &self,
        key: &PreparedKey,
        inputs: &[LweCiphertext],
        lut: &Lut,
    ) -> Result<Vec<ExtractedLwe>> {
        check_inputs(key, inputs.iter().map(|c| (c.params(), c.tag())))?;
        lut.check_params(key.params())?;
        let prepared = self.prepared(key)?;
        let set = key.params();
        let ring = self.ring(set)?;
        let width = set.params().big_n() + 1;
        let mut result = Vec::with_capacity(inputs.len());
        let _guard = self.lock.lock().map_err(|_| self.device_err("device lock poisoned"))?;
        let uploaded;
        let table = if lut.is_sign() {
            &ring.sign_lut
        } else {
            uploaded = Residues::upload(&self.drv, lut.coefficients(), word_bits(set))?;
            &uploaded
        };
        for chunk in inputs.chunks(MAX_LAUNCH_BATCH) {
            let out = Buffer::<D, u64>::new(&self.drv, chunk.len() * width)?;
            self.launch_blind_rotate(&ring, prepared, set, chunk, table.dev_ptr(), &out)?;
            let mut words = vec![0u64; chunk.len() * width];
            out.read_into(&mut words)?;
            for w in words.chunks(width) {
                result.push(ExtractedLwe::from_raw(set, key.tag(), w.to_vec())?);
            }
        }
        Ok(result)
    }

    fn key_switch_batch(&self, key: &PreparedKey, inputs: &[ExtractedLwe]) -> Result<Vec<LweCiphertext>> {
        check_inputs(key, inputs.iter().map(|c| (c.params(), c.tag())))?;
        let prepared = self.prepared(key)?;
        let set = key.params();
        let ring = self.ring(set)?;
        let n = set.params().n();
        let mut result = Vec::with_capacity(inputs.len());
        let _guard = self.lock.lock().map_err(|_| self.device_err("device lock poisoned"))?;
        for chunk in inputs.chunks(MAX_LAUNCH_BATCH) {
            let words: Vec<u64> = chunk.iter().flat_map(|c| c.as_words().iter().copied()).collect();
            let input = Buffer::from_slice(&self.drv, &words)?;
            let out = self.launch_key_switch(&ring, prepared, set, &input, chunk.len(), 0)?;
            for w in out.chunks(n + 1) {
                result.push(LweCiphertext::from_raw(set, key.tag(), w.to_vec())?);
            }
        }
        Ok(result)
    }

    /// Fused: blind rotation and key switch back to back on the device, one copy back.
    fn bootstrap_batch(&self, key: &PreparedKey, inputs: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        check_inputs(key, inputs.iter().map(|c| (c.params(), c.tag())))?;
        let prepared = self.prepared(key)?;
        let set = key.params();
        let ring = self.ring(set)?;
        let p = set.params();
        let (width, n) = (p.big_n() + 1, p.n());
        let eighth = (p.q_lwe() / 8) as u32;
        let mut result = Vec::with_capacity(inputs.len());
        let _guard = self.lock.lock().map_err(|_| self.device_err("device lock poisoned"))?;
        for chunk in inputs.chunks(MAX_LAUNCH_BATCH) {
            let extracted = Buffer::<D, u64>::new(&self.drv, chunk.len() * width)?;
            self.launch_blind_rotate(&ring, prepared, set, chunk, ring.sign_lut.dev_ptr(), &extracted)?;
            let out = self.launch_key_switch(&ring, prepared, set, &extracted, chunk.len(), eighth)?;
            for w in out.chunks(n + 1) {
                result.push(LweCiphertext::from_raw(set, key.tag(), w.to_vec())?);
            }
        }
        Ok(result)
    }
}

impl<D: GpuDriver> Backend for GpuBackend<D> {
    fn kind(&self) -> BackendKind {
        self.drv.kind()
    }

    fn name(&self) -> String {
        format!("{}:{GPU_NTT_VARIANT}", self.drv.label())
    }

    fn device_info(&self) -> DeviceInfo {
        self.drv.device_info()
    }
}
