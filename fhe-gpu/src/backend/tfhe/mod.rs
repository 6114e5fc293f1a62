//! `BootstrapOps` on the device for the bit scheme: the evaluation key is uploaded once
//! by `prepare` and stays resident; a batch is bootstrapped in two launches of the set's
//! program ([`Program::Tfhe`]): blind rotation with extraction ([`bootstrap`],
//! `kernels/tfhe/bootstrap.cu`; `kernels/tfhe/multi_bit.cu` for a multi-bit set), then
//! key switching ([`keyswitch`], `kernels/tfhe/keyswitch.cu`), and one copy back.

mod bootstrap;
mod keyswitch;

use std::sync::Arc;

use fhe_api::ops::{check_inputs, check_narrow_lwe, KeyMeta};
use fhe_api::ring::math::{ntt_slot_exponent, pow_mod};
use fhe_api::{Backend, BootstrapOps, EvaluationKey, ExtractedLwe, Lut, LweCiphertext, ParamSet, PreparedKey, Result};

use super::ring::RingTables;
use super::{GpuBackend, Residues};
use crate::args::{GpuModulus, GpuNttTable};
use crate::driver::{Buffer, GpuDriver};
use crate::source::Program;

/// Ciphertexts per launch: bounds the workspace (`(2 + 2L) N` words per ciphertext).
const MAX_LAUNCH_BATCH: usize = 2048;

/// One parameter set on one device: its compiled program and resident tables.
pub struct SetState<D: GpuDriver> {
    module: Arc<D::Module>,
    /// The ring's tables in the set's word width, shared with `RingOps` on that ring;
    /// held so the addresses in `ring_entry` stay valid.
    _ring: Arc<RingTables<D>>,
    /// The blind rotation's one-entry prime and NTT table.
    ring_entry: Buffer<D, GpuNttTable>,
    /// The key switch's one-entry prime.
    modulus: Buffer<D, GpuModulus>,
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
    /// `[sample][n + 1]`, `a` then `b`, as 16-bit words; `None` for a multi-bit key
    /// ([`GpuBackend::prepare_blind_rotation`]), whose 20-bit words the kernels do not
    /// key-switch yet.
    ksk: Option<Buffer<D, u16>>,
}

impl<D: GpuDriver> GpuPrepared<D> {
    /// The key-switching key, or `Error::Unsupported` for a key prepared for blind
    /// rotation only.
    fn ksk(&self, backend: String) -> Result<&Buffer<D, u16>> {
        self.ksk.as_ref().ok_or(fhe_api::Error::Unsupported {
            backend,
            scheme: "key switching of LWE words over 16 bits (a multi-bit key is prepared for blind rotation only)",
        })
    }
}

impl<D: GpuDriver> GpuBackend<D> {
    /// The set's program and tables, compiled and uploaded on first use.
    fn set_state(&self, set: ParamSet) -> Result<Arc<SetState<D>>> {
        self.sets.get_or_try_init(&set, || {
            let p = set.params();
            let program = Program::Tfhe(set);
            let bits = program.word_bits();
            let ring = self.ring_tables(p.ring_degree, p.ring_modulus, bits)?;
            let (q, two_n) = (p.q_ring(), 2 * p.big_n() as u64);
            let psi_pow: Vec<u64> = (0..two_n).map(|e| pow_mod(ring.psi_root, e, q)).collect();
            let log_n = p.big_n().trailing_zeros();
            let slot_exp: Vec<u32> = (0..p.big_n()).map(|k| ntt_slot_exponent(k, log_n) as u32).collect();
            Ok(SetState {
                module: self.module(program)?,
                ring_entry: Buffer::from_slice(&self.drv, &[ring.entry])?,
                modulus: Buffer::from_slice(&self.drv, &[ring.entry.modulus])?,
                _ring: ring,
                psi_pow: Residues::upload(&self.drv, &psi_pow, bits)?,
                slot_exp: Buffer::from_slice(&self.drv, &slot_exp)?,
                sign_lut: Residues::upload(&self.drv, Lut::sign(set).coefficients(), bits)?,
            })
        })
    }

    fn prepared<'a>(&self, key: &'a PreparedKey) -> Result<&'a GpuPrepared<D>> {
        key.downcast::<GpuPrepared<D>>(&self.name())
    }

    /// Every RGSW key of `ek`, `[key][row][half][slot]` (half 0 the expanded `a`).
    fn bsk_words(ek: &EvaluationKey) -> Vec<u64> {
        let p = ek.params().params();
        let per_key = 2 * p.rgsw_rows() * p.big_n();
        let mut bsk = vec![0u64; 2 * p.bsk_b_len()];
        bsk.chunks_mut(per_key).enumerate().for_each(|(key, out)| ek.rgsw_key_rows(key, out, |x| x));
        bsk
    }

    /// The bootstrap key of a multi-bit set (`M2C2G2`, `M2C2G3`) resident for
    /// [`BootstrapOps::blind_rotate_batch_lut`] (`kernels/tfhe/multi_bit.cu`). Their LWE
    /// words exceed 16 bits, so [`BootstrapOps::prepare`] refuses the whole key (as
    /// [`Backend::prepares`] says) and the key switch of such a key is
    /// `Error::Unsupported`; a GINX set's key is `Error::InvalidInput`.
    pub fn prepare_blind_rotation(&self, ek: &EvaluationKey) -> Result<PreparedKey> {
        let set = ek.params();
        if set.params().grouping().is_none() {
            return Err(fhe_api::Error::InvalidInput(format!(
                "{set} is not a multi-bit set; BootstrapOps::prepare takes its keys"
            )));
        }
        let bsk = Self::bsk_words(ek);
        self.set_state(set)?;
        let _guard = self.device_lock()?;
        let bsk = Residues::upload(&self.drv, &bsk, Program::Tfhe(set).word_bits())?;
        Ok(PreparedKey::new(self.name(), KeyMeta::of(ek), GpuPrepared { bsk, ksk: None }))
    }
}

impl<D: GpuDriver> BootstrapOps for GpuBackend<D> {
    fn prepare(&self, ek: &EvaluationKey) -> Result<PreparedKey> {
        let set = ek.params();
        check_narrow_lwe(self.name(), set)?; // the kernels hold LWE words in 16 bits
        let p = set.params();
        let bsk = Self::bsk_words(ek);
        let per_j = p.ksk_levels.0 * (p.ksk_base() as usize - 1) * (p.n() + 1);
        let mut ksk = vec![0u16; p.ksk_samples() * (p.n() + 1)];
        ksk.chunks_mut(per_j).enumerate().try_for_each(|(j, out)| ek.ksk_rows(j, out))?;
        self.set_state(set)?; // compile before the first gate, not during it
        let _guard = self.device_lock()?;
        let prepared = GpuPrepared {
            bsk: Residues::upload(&self.drv, &bsk, Program::Tfhe(set).word_bits())?,
            ksk: Some(Buffer::from_slice(&self.drv, &ksk)?),
        };
        Ok(PreparedKey::new(self.name(), KeyMeta::of(ek), prepared))
    }

    /// The sign table is resident ([`SetState`]); any other is uploaded for the call.
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
        let state = self.set_state(set)?;
        let width = set.params().big_n() + 1;
        let mut result = Vec::with_capacity(inputs.len());
        let _guard = self.device_lock()?;
        let uploaded;
        let table = if lut.is_sign() {
            &state.sign_lut
        } else {
            uploaded = Residues::upload(&self.drv, lut.coefficients(), Program::Tfhe(set).word_bits())?;
            &uploaded
        };
        for chunk in inputs.chunks(MAX_LAUNCH_BATCH) {
            let out = Buffer::<D, u64>::new(&self.drv, chunk.len() * width)?;
            self.launch_blind_rotate(&state, prepared, set, chunk, table.dev_ptr(), &out)?;
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
        prepared.ksk(self.name())?;
        let set = key.params();
        let state = self.set_state(set)?;
        let n = set.params().n();
        let mut result = Vec::with_capacity(inputs.len());
        let _guard = self.device_lock()?;
        for chunk in inputs.chunks(MAX_LAUNCH_BATCH) {
            let words: Vec<u64> = chunk.iter().flat_map(|c| c.as_words().iter().copied()).collect();
            let input = Buffer::from_slice(&self.drv, &words)?;
            let out = self.launch_key_switch(&state, prepared, set, &input, chunk.len(), 0)?;
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
        prepared.ksk(self.name())?;
        let set = key.params();
        let state = self.set_state(set)?;
        let p = set.params();
        let (width, n) = (p.big_n() + 1, p.n());
        let eighth = (p.q_lwe() / 8) as u32;
        let mut result = Vec::with_capacity(inputs.len());
        let _guard = self.device_lock()?;
        for chunk in inputs.chunks(MAX_LAUNCH_BATCH) {
            let extracted = Buffer::<D, u64>::new(&self.drv, chunk.len() * width)?;
            self.launch_blind_rotate(&state, prepared, set, chunk, state.sign_lut.dev_ptr(), &extracted)?;
            let out = self.launch_key_switch(&state, prepared, set, &extracted, chunk.len(), eighth)?;
            for w in out.chunks(n + 1) {
                result.push(LweCiphertext::from_raw(set, key.tag(), w.to_vec())?);
            }
        }
        Ok(result)
    }
}
