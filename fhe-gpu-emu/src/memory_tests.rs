//! Device memory on the emulator: the sizes `fhe_gpu::memory` reports are the bytes the
//! backend keeps resident (counted through the driver), and a simulated small device
//! refuses what does not fit with `Error::OutOfMemory` naming the right numbers, before
//! allocating, keeping what is resident.

use std::sync::Arc;

use fhe_api::ckks::params::{Preset, SecretDist};
use fhe_api::ckks::{EvalKeys, SwitchingKey};
use fhe_api::ops::CkksOps;
use fhe_api::ring::automorphism::galois_element_for_rotation;
use fhe_api::{Backend, Error};
use fhe_cpu::CpuBackend;
use fhe_gpu::ckks_footprint;
use fhe_gpu::memory::{ciphertext_bytes, plaintext_bytes, switch_key_bytes};
use fhe_schemes::ckks::{BootstrapConfig, Bootstrapper, Context};
use fhe_schemes::testing::ckks::circuits::insecure_params;
use fhe_schemes::testing::ckks::each_op::{op_inputs, OpInputs};

use super::*;

fn inputs(preset: Preset) -> OpInputs {
    op_inputs(Arc::new(CpuBackend::oracle()), preset)
}

fn galois_key(x: &OpInputs) -> &SwitchingKey {
    let g = galois_element_for_rotation(x.params.ring_degree(), 1);
    x.keys.eval.galois.get(&g).expect("the suite's rotation-by-1 key")
}

/// Bytes `f` leaves resident on `gpu`'s device (temporaries freed by then are not
/// counted), and its result.
fn resident<T>(gpu: &GpuBackend<EmuDriver>, f: impl FnOnce() -> T) -> (u64, T) {
    let before = gpu.driver().live_bytes();
    let out = f();
    (gpu.driver().live_bytes() - before, out)
}

/// Each reported size equals what the backend allocates for the object, at both small
/// presets (`dnum` 3 of one prime each; `dnum` 4 with a short last digit).
#[test]
fn reported_sizes_are_the_bytes_the_backend_allocates() {
    for preset in [Preset::Slots4096Scale40Depth2, Preset::Slots8192Scale40Depth6] {
        let (gpu, x) = (emulated_backend().unwrap(), inputs(preset));
        let f = ckks_footprint(&x.params);
        // The plan and the NTT tables are made on first use; they are not counted.
        let _warm = (gpu.upload(&x.a).unwrap(), gpu.upload_plaintext(&x.plain).unwrap());
        let (ct, _a) = resident(&gpu, || gpu.upload(&x.b).unwrap());
        let (pt, _p) = resident(&gpu, || gpu.upload_plaintext(&x.plain).unwrap());
        let (ext, _e) = resident(&gpu, || gpu.upload_plaintext(&x.extended).unwrap());
        let (rlk, _r) = resident(&gpu, || gpu.prepare_key(x.keys.eval.relin.as_ref().unwrap()).unwrap());
        let (gk, _g) = resident(&gpu, || gpu.prepare_key(galois_key(&x)).unwrap());
        let (low, _l) = resident(&gpu, || gpu.prepare_key_up_to(galois_key(&x), 0).unwrap());
        let name = x.params.name();
        assert_eq!((ct, pt, ext), (f.ciphertext, f.plaintext, f.plaintext_extended), "{name}");
        assert_eq!((rlk, gk), (f.relin_key, f.galois_key), "{name}");
        assert_eq!(low, switch_key_bytes(&x.params, 0, true), "{name}");
        // A key cut to level 0 keeps the digit of q_0 only: less than the whole key.
        assert!(low < f.galois_key, "{name}");
    }
}

/// A rotation key on a device with a few bytes too few is refused with the key's size
/// and the free bytes; nothing is allocated, the resident ciphertext is intact, smaller
/// requests still work, and with exactly enough free the key is made.
#[test]
fn a_key_that_cannot_fit_is_refused_and_nothing_is_lost() {
    let (gpu, x) = (emulated_backend().unwrap(), inputs(Preset::Slots4096Scale40Depth2));
    let f = ckks_footprint(&x.params);
    let a = gpu.upload(&x.a).unwrap();
    let drv = gpu.driver();
    let live = drv.live_bytes();
    drv.set_memory_limit(Some(live + f.galois_key - 8));
    let Err(e) = gpu.prepare_key(galois_key(&x)) else { panic!("a key larger than the free memory was made") };
    let Error::OutOfMemory { what, needed, available } = &e else { panic!("not OutOfMemory: {e}") };
    assert_eq!((*needed, *available), (f.galois_key, f.galois_key - 8), "{e}");
    assert!(what.contains("Galois key") && what.contains(x.params.name()), "{what}");
    assert!(e.to_string().contains(&f.galois_key.to_string()), "{e}");
    assert_eq!(drv.live_bytes(), live, "the refused key allocated nothing");
    // Nothing lost: the resident ciphertext reads back, and a smaller upload fits.
    assert_eq!(gpu.download(&a).unwrap(), x.a);
    let b = gpu.upload(&x.b).unwrap();
    assert_eq!(gpu.download(&b).unwrap(), x.b);
    drop(b);
    // Exactly enough free memory is enough.
    drv.set_memory_limit(Some(live + f.galois_key));
    gpu.prepare_key(galois_key(&x)).unwrap();
}

/// An operation whose temporaries do not fit (no pre-flight for those: the driver's
/// allocation fails) is `Error::OutOfMemory` as well, never a panic; its inputs stay.
#[test]
fn an_operation_out_of_device_memory_is_an_error_not_an_abort() {
    let (gpu, x) = (emulated_backend().unwrap(), inputs(Preset::Slots4096Scale40Depth2));
    let (a, b) = (gpu.upload(&x.a).unwrap(), gpu.upload(&x.b).unwrap());
    let out = x.a.meta().clone();
    gpu.add(&a, &b, out.clone()).unwrap();
    let drv = gpu.driver();
    drv.set_memory_limit(Some(drv.live_bytes()));
    let Err(e) = gpu.add(&a, &b, out.clone()) else { panic!("a sum was made without room for it") };
    let Error::OutOfMemory { needed, available, .. } = e else { panic!("not OutOfMemory: {e}") };
    assert_eq!((needed, available), (ciphertext_bytes(&x.params, x.params.max_level()), 0));
    drv.set_memory_limit(None);
    assert_eq!(gpu.download(&a).unwrap(), x.a);
    gpu.add(&a, &b, out).unwrap();
}

/// A batch is checked as a whole: `count` ciphertexts' bytes against the free memory.
#[test]
fn a_batch_of_ciphertexts_is_checked_before_upload() {
    let params = Preset::Slots4096Scale40Depth2.params();
    let top = params.max_level();
    let one = ciphertext_bytes(params, top);
    let gpu = emulated_backend_with_memory(10 * one).unwrap();
    gpu.check_ciphertexts_fit(params, top, 10).unwrap();
    let Err(e) = gpu.check_ciphertexts_fit(params, top, 11) else { panic!("11 ciphertexts fit in room for 10") };
    let Error::OutOfMemory { needed, available, .. } = e else { panic!("not OutOfMemory: {e}") };
    assert_eq!((needed, available), (11 * one, 10 * one));
    assert_eq!(gpu.device_memory(), Some(fhe_gpu::DeviceMemory { free: 10 * one, total: 10 * one }));
    // An extended plaintext is its `q` limbs and its `P` limbs.
    assert_eq!(plaintext_bytes(params, top + 1, true), one / 2 + 8 * params.n() as u64 * params.p().len() as u64);
}

/// A bootstrapper whose diagonals and working set the device cannot hold is refused
/// before it encodes any (the estimate against the device's free bytes, not the host's).
#[test]
fn a_bootstrap_beyond_the_device_is_refused_before_it_starts() {
    let gpu = Arc::new(emulated_backend().unwrap());
    let (params, config) = (insecure_params(SecretDist::Ternary), BootstrapConfig::default());
    let ctx = Context::new(gpu.clone(), params.clone()).unwrap();
    let ev = ctx.evaluator(&EvalKeys::default()).unwrap();
    let live = gpu.driver().live_bytes();
    gpu.driver().set_memory_limit(Some(live + (1 << 20)));
    let estimate = Bootstrapper::memory_estimate(&params, &config).unwrap();
    let Err(e) = Bootstrapper::new(&ctx, &ev, &config) else { panic!("a bootstrapper beyond the device was made") };
    let Error::OutOfMemory { what, needed, available } = &e else { panic!("not OutOfMemory: {e}") };
    assert_eq!((*needed, *available), (estimate.plaintexts + estimate.working, 1 << 20), "{e}");
    assert!(what.contains("bootstrapping") && what.contains("emulator"), "{what}");
    assert_eq!(gpu.driver().live_bytes(), live, "nothing was uploaded");
}

/// Through the public API: an evaluator whose key set the device cannot hold is
/// `Error::OutOfMemory` for the first key that does not fit, and the keys prepared before
/// it are freed with the failed evaluator (the device is back where it was).
#[test]
fn an_evaluator_beyond_the_device_fails_cleanly() {
    let x = inputs(Preset::Slots4096Scale40Depth2);
    let gpu = Arc::new(emulated_backend().unwrap());
    let ctx = Context::new(gpu.clone(), x.params.clone()).unwrap();
    let _warm = gpu.upload(&x.a).unwrap();
    let f = ckks_footprint(&x.params);
    let live = gpu.driver().live_bytes();
    // Room for the relinearization key and one rotation key, not the suite's others.
    gpu.driver().set_memory_limit(Some(live + f.relin_key + f.galois_key));
    assert!(x.keys.eval.galois.len() > 1);
    let Err(e) = ctx.evaluator(&x.keys.eval) else { panic!("the whole key set fit") };
    let Error::OutOfMemory { needed, available, .. } = e else { panic!("not OutOfMemory: {e}") };
    assert_eq!((needed, available), (f.galois_key, 0));
    assert_eq!(gpu.driver().live_bytes(), live, "the keys prepared before the refusal are freed");
}
