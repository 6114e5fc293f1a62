//! `RingOps` on the device: the negacyclic NTT of any ring `(N, q)` that
//! [`NttTables`] accepts (`N` a power of two up to `2^17`, `q < 2^62` prime with
//! `q = 1 mod 2N`), with the conventions of `fhe_api::ops::ring`, through the one
//! limb-batched kernel of `kernels/ring_ntt.cu`, in the passes of the backend's NTT
//! variant ([`super::variant`]). A ring's twiddles are uploaded once and
//! kept ([`RingTables`]); a call over several limbs ([`GpuBackend::ring_forward_limbs`])
//! gathers their table entries, so one launch sequence transforms every limb, each with
//! its own prime. The bit scheme's `RingOps` calls are the one-limb case.

use std::sync::Arc;

use fhe_api::ops::{check_ring_input, RingOps};
use fhe_api::ring::ntt::NttTables;
use fhe_api::ring::{PolynomialSize, RingModulus};
use fhe_api::{Error, Result};

use super::variant::Pass;
use super::{GpuBackend, Residues};
use crate::args::{DevPtr, GpuModulus, GpuNttTable, Residue, RingNttArgs};
use crate::driver::{Buffer, GpuDriver, LaunchShape};
use crate::source::{shoup_for, word_bits_for, Program};

/// One ring's NTT on the device in one word width: the twiddles, and the table entry
/// that points at them (copied into each call's table of limbs).
pub struct RingTables<D: GpuDriver> {
    pub(super) entry: GpuNttTable,
    /// `psi`, the primitive 2N-th root the tables are powers of.
    pub(super) psi_root: u64,
    // Owned so the addresses in `entry` stay valid as long as these tables are cached.
    _twiddles: [Residues<D>; 4],
}

/// One resident NTT launch sequence's shape: `2^log_n` words per transform, `limbs`
/// table entries, the direction and the word width.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DeviceNtt {
    pub log_n: u32,
    pub limbs: u32,
    pub forward: bool,
    pub bits: u32,
}

/// The input contract over several limbs: `data` holds whole polynomials of
/// `moduli.len()` limbs of `N` words (`[polynomial][limb][N]`), each word below its
/// limb's prime. One limb is exactly `check_ring_input`.
fn check_limbs(n: PolynomialSize, moduli: &[RingModulus], data: &[u64]) -> Result<()> {
    match moduli {
        [] => Err(Error::InvalidInput("an NTT over no limbs: name at least one prime".into())),
        [q] => check_ring_input(n, *q, data),
        _ => {
            let width = n.0 * moduli.len();
            if n.0 == 0 || !data.len().is_multiple_of(width) {
                return Err(Error::InvalidInput(format!(
                    "NTT batch of {} words is not a whole number of polynomials of {} limbs of N = {} words",
                    data.len(),
                    moduli.len(),
                    n.0
                )));
            }
            for (p, poly) in data.chunks(width).enumerate() {
                for (l, (limb, q)) in poly.chunks(n.0).zip(moduli).enumerate() {
                    check_ring_input(n, *q, limb).map_err(|e| {
                        let detail = match e {
                            Error::InvalidInput(m) => m,
                            other => other.to_string(),
                        };
                        Error::InvalidInput(format!("polynomial {p}, limb {l} (q = {}): {detail}", q.0))
                    })?;
                }
            }
            Ok(())
        }
    }
}

impl<D: GpuDriver> GpuBackend<D> {
    /// The tables of `(n, q)` in `bits`-bit words, built and uploaded on first use. A
    /// ring the tables refuse is `Error::InvalidRing`, as on the CPU.
    pub(super) fn ring_tables(&self, n: PolynomialSize, q: RingModulus, bits: u32) -> Result<Arc<RingTables<D>>> {
        self.rings.get_or_try_init(&(n.0, q.0, bits), || {
            let t = NttTables::new(n, q)?;
            let q = q.0;
            let companions = |w: &[u64]| w.iter().map(|&x| shoup_for(x, q, bits)).collect::<Vec<u64>>();
            let up = |w: &[u64]| Residues::upload(&self.drv, w, bits);
            let twiddles =
                [up(&t.psi_rev)?, up(&companions(&t.psi_rev))?, up(&t.ipsi_rev)?, up(&companions(&t.ipsi_rev))?];
            let entry = GpuNttTable {
                modulus: GpuModulus::new(q),
                n_inv: t.n_inv,
                n_inv_shoup: shoup_for(t.n_inv, q, bits),
                psi: twiddles[0].dev_ptr(),
                psi_shoup: twiddles[1].dev_ptr(),
                ipsi: twiddles[2].dev_ptr(),
                ipsi_shoup: twiddles[3].dev_ptr(),
            };
            Ok(RingTables { entry, psi_root: t.psi, _twiddles: twiddles })
        })
    }

    /// Forward NTTs of RNS polynomials: `data` is `[polynomial][limb][N]`, limb `l` over
    /// the prime `moduli[l]`, all limbs of all polynomials in one launch sequence. Each
    /// limb's words equal `RingOps::ring_forward` over its prime. A ragged batch, a word
    /// at or above its prime, or a ring the tables refuse is an error naming it.
    pub fn ring_forward_limbs(&self, n: PolynomialSize, moduli: &[RingModulus], data: &mut [u64]) -> Result<()> {
        self.transform_limbs(n, moduli, data, true)
    }

    /// The exact inverse of [`GpuBackend::ring_forward_limbs`], `1/N` included.
    pub fn ring_inverse_limbs(&self, n: PolynomialSize, moduli: &[RingModulus], data: &mut [u64]) -> Result<()> {
        self.transform_limbs(n, moduli, data, false)
    }

    fn transform_limbs(
        &self,
        n: PolynomialSize,
        moduli: &[RingModulus],
        data: &mut [u64],
        forward: bool,
    ) -> Result<()> {
        check_limbs(n, moduli, data)?;
        // One word width for the launch: 64 bits as soon as one prime needs it.
        let bits = moduli.iter().map(|q| word_bits_for(q.0)).max().unwrap_or(64);
        let tables = moduli.iter().map(|&q| self.ring_tables(n, q, bits)).collect::<Result<Vec<_>>>()?;
        if data.is_empty() {
            return Ok(());
        }
        let transforms = u32::try_from(data.len() / n.0)
            .map_err(|_| Error::InvalidInput(format!("NTT batch of {} polynomials is too large", data.len() / n.0)))?;
        let module = self.module(Program::RingNtt { word_bits: bits })?;
        let entries: Vec<GpuNttTable> = tables.iter().map(|t| t.entry).collect();
        let _guard = self.device_lock()?;
        let table = Buffer::from_slice(&self.drv, &entries)?;
        let buf = Residues::upload(&self.drv, data, bits)?;
        let ntt = DeviceNtt { log_n: n.0.trailing_zeros(), limbs: moduli.len() as u32, forward, bits };
        // SAFETY: `buf` holds `transforms` polynomials of N words and `table` one entry
        // per limb, whose twiddles (N words each) live in `tables`; all of it stays alive
        // until `synchronize` below returns.
        unsafe { self.ntt_in_place(&module, buf.dev_ptr(), table.dev_ptr(), transforms, ntt)? };
        self.drv.synchronize()?;
        buf.read_into(data)
    }

    /// Issues the launches of `transforms` NTTs in place on resident words (transform `t`
    /// over table entry `t % ntt.limbs`), with `module` holding `lux_ring_ntt` for
    /// `ntt.bits`-bit words. Does not synchronize.
    ///
    /// # Safety
    /// `data` holds `transforms` polynomials of `2^log_n` words of `ntt.bits` bits and
    /// `tables` `ntt.limbs` entries whose twiddles are live; both stay alive until the
    /// launches complete; the caller holds the device lock.
    pub(crate) unsafe fn ntt_in_place(
        &self,
        module: &D::Module,
        data: DevPtr<Residue>,
        tables: DevPtr<GpuNttTable>,
        transforms: u32,
        ntt: DeviceNtt,
    ) -> Result<()> {
        let DeviceNtt { log_n, limbs, forward, bits } = ntt;
        if transforms == 0 {
            return Ok(());
        }
        for pass in self.variant.passes(log_n) {
            let args = RingNttArgs {
                data,
                tables,
                transforms,
                limbs,
                log_n,
                inverse: u32::from(!forward),
                first_stage: pass.first,
                last_stage: pass.last,
                shared: u32::from(pass.shared),
                log_groups: pass.log_groups,
            };
            let shape = self.ring_ntt_shape(transforms, log_n, pass, bits);
            // SAFETY: the caller's contract; launches run in issue order.
            unsafe { self.drv.launch(module, shape, &args)? };
        }
        Ok(())
    }

    /// A register pass: one group per thread over a bounded grid; a shared-memory pass:
    /// one tile of `2^log_groups` groups per block at a time, one butterfly per thread
    /// and barrier phase.
    fn ring_ntt_shape(&self, transforms: u32, log_n: u32, pass: Pass, bits: u32) -> LaunchShape {
        let max_grid = u64::from(self.drv.max_grid().max(1));
        let r = pass.last - pass.first;
        let groups = u64::from(transforms) << (log_n - r);
        if !pass.shared {
            let block = self.block_for(usize::try_from(groups).unwrap_or(usize::MAX));
            let grid = groups.div_ceil(u64::from(block)).clamp(1, max_grid) as u32;
            LaunchShape { grid, block, shared_bytes: 0 }
        } else {
            let tiles = groups.div_ceil(1 << pass.log_groups);
            let shared_bytes = (1u32 << (pass.log_groups + r)) * (bits / 8);
            LaunchShape {
                grid: tiles.clamp(1, max_grid) as u32,
                block: self.block_for(1 << (pass.log_groups + r - 1)),
                shared_bytes,
            }
        }
    }
}

impl<D: GpuDriver> RingOps for GpuBackend<D> {
    fn ring_forward(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        self.transform_limbs(n, &[q], data, true)
    }

    fn ring_inverse(&self, n: PolynomialSize, q: RingModulus, data: &mut [u64]) -> Result<()> {
        self.transform_limbs(n, &[q], data, false)
    }

    fn ntt_variant(&self) -> &str {
        self.variant.name()
    }
}

/// The launch plan is host logic: checked here, without a device.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limb_checks_name_the_limb() {
        let (n, qs) = (PolynomialSize(4), [RingModulus(17), RingModulus(97)]);
        assert!(check_limbs(n, &qs, &[0; 16]).is_ok());
        let e = check_limbs(n, &qs, &[0; 12]).unwrap_err().to_string();
        assert!(e.contains("not a whole number of polynomials of 2 limbs"), "{e}");
        let mut bad = [0u64; 16];
        bad[13] = 97;
        let e = check_limbs(n, &qs, &bad).unwrap_err().to_string();
        assert!(e.contains("polynomial 1, limb 1 (q = 97)") && e.contains("input 1 "), "{e}");
        bad[13] = 20; // below 97: fine in limb 1, though not below limb 0's 17
        assert!(check_limbs(n, &qs, &bad).is_ok());
        assert!(check_limbs(n, &[], &[]).is_err());
        assert!(check_limbs(PolynomialSize(0), &qs, &[]).is_err());
    }
}
