//! Key switching: mod switch Q -> q and key switch N -> n, one launch of
//! `lux_key_switch` (`kernels/tfhe/keyswitch.cu`), one block per sample.

use fhe_api::{Backend, ParamSet, Result};

use super::{GpuPrepared, SetState};
use crate::args::KeySwitchArgs;
use crate::backend::{launch_grid, GpuBackend};
use crate::driver::{Buffer, GpuDriver, LaunchShape};

impl<D: GpuDriver> GpuBackend<D> {
    /// Key switches `count` extracted samples in `input` (device) and reads back their
    /// `count * (n + 1)` words, with `add` on each `b` (q/8 for a sign bootstrap).
    pub(super) fn launch_key_switch(
        &self,
        state: &SetState<D>,
        key: &GpuPrepared<D>,
        set: ParamSet,
        input: &Buffer<D, u64>,
        count: usize,
        add: u32,
    ) -> Result<Vec<u32>> {
        let n = set.params().n();
        let ksk = key.ksk(self.name())?;
        let out = Buffer::<D, u32>::new(&self.drv, count * (n + 1))?;
        let grid = launch_grid(count)?;
        let args = KeySwitchArgs {
            input: input.dev_ptr(),
            ksk: ksk.dev_ptr(),
            modulus: state.modulus.dev_ptr(),
            output: out.dev_ptr(),
            count: grid,
            add,
        };
        let shape = LaunchShape { grid, block: self.block_for(n + 1), shared_bytes: 0 };
        // SAFETY: `input` holds `count` extracted samples of N + 1 words, the key this
        // set's samples, the modulus one entry, `out` count * (n + 1) words.
        unsafe { self.drv.launch(&state.module, shape, &args)? };
        self.drv.synchronize()?;
        let mut words = vec![0u32; count * (n + 1)];
        out.read_into(&mut words)?;
        Ok(words)
    }
}
