//! The `LUX_FHE_BACKEND` contract of DESIGN.md, through `Engine::from_env`. One test
//! function, so no other test thread sees the environment change.

use lux_fhe::{BackendKind, Engine, Probe};

fn with_env(backend: Option<&str>, ntt: Option<&str>) -> lux_fhe::Result<Engine> {
    // SAFETY-free in edition 2021; this file holds a single test, so nothing else reads
    // the environment concurrently.
    match backend {
        Some(v) => std::env::set_var("LUX_FHE_BACKEND", v),
        None => std::env::remove_var("LUX_FHE_BACKEND"),
    }
    match ntt {
        Some(v) => std::env::set_var("LUX_FHE_NTT", v),
        None => std::env::remove_var("LUX_FHE_NTT"),
    }
    Engine::from_env()
}

#[test]
fn backend_selection_follows_the_contract() {
    assert_eq!(with_env(Some("cpu"), None).unwrap().backend().kind(), BackendKind::Cpu);
    // Unset and auto: the CPU unless a hardware backend answers (software adapters never).
    let gpus = [BackendKind::Cuda, BackendKind::Hip, BackendKind::Wgpu];
    let registry = lux_fhe::registry();
    if !gpus.iter().any(|&k| registry.probe(k) == Probe::Hardware) {
        assert_eq!(with_env(None, None).unwrap().backend().kind(), BackendKind::Cpu);
        assert_eq!(with_env(Some("auto"), None).unwrap().backend().kind(), BackendKind::Cpu);
    }
    // A required backend that cannot run fails at once, with its cause.
    for k in gpus {
        if lux_fhe::available(k) {
            continue;
        }
        let e = with_env(Some(k.name()), None).unwrap_err().to_string();
        assert!(e.contains(&format!("backend `{k}` unavailable")), "{e}");
        assert_eq!(e.contains("not compiled in"), !lux_fhe::compiled_in(k), "{e}");
    }
    let e = with_env(Some("bogus"), None).unwrap_err().to_string();
    assert!(e.contains("unknown backend `bogus`") && e.contains("cpu, cuda, hip, wgpu, auto"), "{e}");
    assert_eq!(with_env(Some("cpu"), Some("reference")).unwrap().backend().name(), "cpu:reference");
    let e = with_env(Some("cpu"), Some("bogus-ntt")).unwrap_err().to_string();
    assert!(e.contains("bogus-ntt") && e.contains("reference"), "{e}");
    std::env::set_var("LUX_FHE_DEVICE", "first");
    let e = with_env(Some("cpu"), None).unwrap_err().to_string();
    assert!(e.contains("LUX_FHE_DEVICE"), "{e}");
    std::env::remove_var("LUX_FHE_DEVICE");
}
