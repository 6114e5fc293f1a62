use fhe_api::{BackendOptions, Probe};
use fhe_gpu::{kernel_source, Dialect, Program};

use super::*;

/// On a machine without CUDA: unavailable with a cause, never a panic. On one with a
/// device: the conformance checks below run instead.
#[test]
fn probe_and_create_never_panic() {
    match probe() {
        Probe::Hardware => assert!(create(&BackendOptions::default()).is_ok()),
        Probe::Software => panic!("CUDA never reports a software device"),
        Probe::Unavailable(cause) => {
            let e = create(&BackendOptions::default()).err().expect("create must fail when the probe does");
            assert!(e.to_string().contains("unavailable"), "{e}");
            assert!(!cause.to_string().is_empty());
        }
    }
    let e = CudaDriver::open(9999).err().expect("no machine has 10000 GPUs");
    assert!(matches!(e, Error::Unavailable { .. }), "{e}");
}

/// `cuda:<variant>`: an unknown variant is refused with the known ones, device or not;
/// a known one is unavailable exactly when the device is.
#[test]
fn ntt_variants_are_checked_before_the_device() {
    let named = |v: &str| BackendOptions { ntt_variant: Some(v.into()), device: 0 };
    let e = create(&named("radix8_fast")).err().expect("an unknown variant");
    assert!(matches!(e, Error::UnknownNttVariant { backend: BackendKind::Cuda, .. }), "{e}");
    assert!(e.to_string().contains("radix2_compact_group16_smem8, radix2_compact_group8_smem8"), "{e}");
    for v in fhe_gpu::GPU_NTT_VARIANTS {
        match (probe(), create(&named(v.name()))) {
            (Probe::Hardware, Ok(b)) => assert_eq!(b.ntt_variant(), v.name()),
            (Probe::Unavailable(_), Err(e)) => assert!(matches!(e, Error::Unavailable { .. }), "{v}: {e}"),
            (p, r) => panic!("{v}: probe {p:?} but create gave {:?}", r.map(|b| b.name())),
        }
    }
}

/// Every kernel of every program (the ring NTT at both word widths, the bit scheme's
/// kernels for every parameter set) compiles with NVRTC for `sm_90` (Hopper). The NTT
/// variants are launch plans over the one `lux_ring_ntt`, whose every path (shared-memory
/// passes, register passes of 1 to 4 stages each way) is in that kernel: compiling it
/// compiles every variant. Where
/// NVRTC is absent this is skipped, unless `LUX_FHE_REQUIRE_NVRTC=1` (CI) makes the
/// absence a failure.
#[test]
fn every_kernel_compiles_for_sm_90() {
    // SAFETY: only tries to dlopen libnvrtc.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        assert!(
            std::env::var("LUX_FHE_REQUIRE_NVRTC").as_deref() != Ok("1"),
            "LUX_FHE_REQUIRE_NVRTC=1 but libnvrtc.so.12 is not on the loader path"
        );
        eprintln!("skipped: libnvrtc not found (pip install nvidia-cuda-nvrtc-cu12, see .ci/run)");
        return;
    }
    for program in Program::all() {
        let ptx =
            compile_ptx(&kernel_source(program, Dialect::Cuda), "sm_90").unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(ptx.contains(".target sm_90"), "{program}: PTX is not for sm_90");
        for k in program.kernels() {
            assert!(ptx.contains(&format!(".entry {k}(")), "{program}: kernel {k} missing from the PTX");
        }
    }
}

#[test]
fn a_compile_error_is_an_error_with_the_log() {
    // SAFETY: only tries to dlopen libnvrtc.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        eprintln!("skipped: libnvrtc not found");
        return;
    }
    let e = compile_ptx("extern \"C\" __global__ void k() { this is not C++; }", "sm_90").unwrap_err().to_string();
    assert!(e.contains("NVRTC failed") && e.contains("error"), "{e}");
}

fn device_backend() -> std::sync::Arc<CudaBackend> {
    let driver = CudaDriver::open(fhe_api::registry::device_from_env().unwrap()).unwrap();
    std::sync::Arc::new(CudaBackend::new(driver, Dialect::Cuda, &BackendOptions::default()).unwrap())
}

/// The limb-batched ring NTT on a device, in every NTT variant: a CKKS chain in one
/// call, the ends of the range (N = 2^17, 62-bit and 32-bit-word primes), and bad
/// input, against the oracle.
#[test]
#[ignore = "needs a CUDA device"]
fn ring_ntt_matches_the_oracle() {
    let open = |variant: fhe_gpu::GpuNttVariant| {
        let driver = CudaDriver::open(fhe_api::registry::device_from_env().unwrap()).unwrap();
        let options = BackendOptions { ntt_variant: Some(variant.name().into()), device: 0 };
        CudaBackend::new(driver, Dialect::Cuda, &options).unwrap()
    };
    fhe_gpu::testing::every_variant_matches_the_oracle(open, &fhe_cpu::CpuBackend::oracle());
}

// The shared conformance suite on a CUDA device: `cargo test -p fhe-cuda -- --ignored`
// there (the device-check bundle carries this test binary and runs it after the gate).
fhe_schemes::conformance_tests!(
    ignore = "needs a CUDA device",
    device_backend(),
    std::sync::Arc::new(fhe_cpu::CpuBackend::oracle()),
    gates_per_set = 1000
);

// The CKKS suite on a CUDA device (the shared backend's `CkksOps`, checked byte for byte
// on the emulator in CI): `cargo test -p fhe-cuda -- --ignored` there.
fhe_schemes::ckks_conformance_tests!(
    ignore = "needs a CUDA device",
    device_backend(),
    std::sync::Arc::new(fhe_cpu::CpuBackend::oracle()),
    preset = fhe_api::ckks::params::Preset::Slots4096Scale40Depth2
);

/// Device memory on a CUDA device: `cuMemGetInfo`'s figures; a batch of production
/// ciphertexts larger than the device refused before allocating, naming the driver's free
/// bytes; an allocation past the device refused by `cuMemAlloc` as the same error (never
/// an abort); and the device still serves a small request afterwards.
#[test]
#[ignore = "needs a CUDA device"]
fn device_memory_is_reported_and_a_request_beyond_it_is_refused() {
    let gpu = device_backend();
    let m = gpu.device_memory().expect("cuMemGetInfo answers");
    assert!(m.total > 0 && m.free <= m.total, "{m:?}");
    let params = fhe_api::ckks::params::Preset::Slots32768Scale40Depth34.params();
    let top = params.max_level();
    let one = fhe_gpu::memory::ciphertext_bytes(params, top);
    let count = (m.total / one + 1) as usize;
    let e = gpu.check_ciphertexts_fit(params, top, count).expect_err("more ciphertexts than the device holds");
    let Error::OutOfMemory { needed, available, .. } = e else { panic!("not OutOfMemory: {e}") };
    assert!(needed == count as u64 * one && available <= m.total, "{needed} {available}");
    let words = (m.total / 8 + (1 << 27)) as usize;
    let Err(e) = fhe_gpu::Buffer::<CudaDriver, u64>::new(gpu.driver(), words) else {
        panic!("an allocation past the device succeeded")
    };
    assert!(matches!(e, Error::OutOfMemory { needed, .. } if needed == words as u64 * 8), "{e}");
    let b = fhe_gpu::Buffer::<CudaDriver, u64>::from_slice(gpu.driver(), &[3, 1, 4]).unwrap();
    let mut back = [0u64; 3];
    b.read_into(&mut back).unwrap();
    assert_eq!(back, [3, 1, 4]);
}
