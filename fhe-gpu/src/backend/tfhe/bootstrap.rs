//! Blind rotation and sample extraction: one launch of `lux_blind_rotate`
//! (`kernels/tfhe/bootstrap.cu`), or `lux_multi_bit_blind_rotate`
//! (`kernels/tfhe/multi_bit.cu`) for a multi-bit set, one block per ciphertext.

use fhe_api::{LweCiphertext, ParamSet, Result};

use super::{GpuPrepared, SetState};
use crate::args::{BlindRotateArgs, DevPtr, MultiBitBlindRotateArgs, Residue};
use crate::backend::{launch_grid, GpuBackend, Residues};
use crate::driver::{Buffer, GpuDriver, LaunchShape};
use crate::source::{blind_rotate_shared, Program};

impl<D: GpuDriver> GpuBackend<D> {
    /// Blind rotation (+ extraction) of `inputs` with test polynomial `lut` (N residues of
    /// this set, resident until the call returns) into `out` (device, `(N+1)` words each).
    pub(super) fn launch_blind_rotate(
        &self,
        state: &SetState<D>,
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
        let workspace = Residues::<D>::zeroed(&self.drv, inputs.len() * per_ct, Program::Tfhe(set).word_bits())?;
        let grid = launch_grid(inputs.len())?;
        let args = BlindRotateArgs {
            input: input.dev_ptr(),
            bsk: key.bsk.dev_ptr(),
            ring: state.ring_entry.dev_ptr(),
            psi_pow: state.psi_pow.dev_ptr(),
            slot_exp: state.slot_exp.dev_ptr(),
            workspace: workspace.dev_ptr(),
            output: out.dev_ptr(),
            lut,
            count: grid,
            reserved: 0,
        };
        let shape = LaunchShape { grid, block: self.block_for(n_ring), shared_bytes: shared_bytes as u32 };
        // SAFETY (both launches): sizes as documented on `BlindRotateArgs`: inputs (n+1)
        // words each, the key for this set (a multi-bit set's in the multi-bit layout, the
        // same words per key), the one-entry ring table (whose twiddles `state` keeps),
        // the tables and the look-up table (N words), the workspace per ciphertext and
        // N + 1 output words per ciphertext. The synchronize keeps `input`/`workspace`
        // alive until the kernel is done.
        if p.grouping().is_some() {
            let a = args;
            let args = MultiBitBlindRotateArgs {
                input: a.input,
                bsk: a.bsk,
                ring: a.ring,
                psi_pow: a.psi_pow,
                slot_exp: a.slot_exp,
                workspace: a.workspace,
                output: a.output,
                lut: a.lut,
                count: a.count,
                reserved: 0,
            };
            // SAFETY: see above.
            unsafe { self.drv.launch(&state.module, shape, &args)? };
        } else {
            // SAFETY: see above.
            unsafe { self.drv.launch(&state.module, shape, &args)? };
        }
        self.drv.synchronize()
    }
}
