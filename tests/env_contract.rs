//! The `LUX_FHE_BACKEND` contract of DESIGN.md, through `Engine::from_env`. One test
//! function, so no other test thread sees the environment change.

use lux_fhe::{BackendKind, Engine};

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
    // Unset and auto: the CPU unless a hardware backend answers (software adapters,
    // such as lavapipe, are never picked).
    let hardware = lux_fhe::registry().probe(BackendKind::Wgpu) == lux_fhe::Probe::Hardware;
    let auto = if hardware { BackendKind::Wgpu } else { BackendKind::Cpu };
    assert_eq!(with_env(None, None).unwrap().backend().kind(), auto);
    assert_eq!(with_env(Some("auto"), None).unwrap().backend().kind(), auto);
    let not_compiled: &[&str] = if cfg!(feature = "wgpu") { &["cuda", "hip"] } else { &["cuda", "hip", "wgpu"] };
    for &k in not_compiled {
        let e = with_env(Some(k), None).unwrap_err().to_string();
        assert!(e.contains(&format!("backend `{k}` unavailable")) && e.contains("not compiled in"), "{e}");
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
