//! The `LUX_FHE_BACKEND` contract of DESIGN.md, through `Engine::from_env` and
//! `Engine::with_backend` on the real environment. One test function, so no other test
//! thread sees the environment change; the precedence table itself is tested row by row
//! on made-up values, without touching the environment (`fhe_api::registry::resolve`).

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
    // with_backend reads LUX_FHE_DEVICE too.
    let e = Engine::with_backend("cpu").unwrap_err().to_string();
    assert!(e.contains("LUX_FHE_DEVICE"), "{e}");
    std::env::remove_var("LUX_FHE_DEVICE");
    // One normalisation: LUX_FHE_NTT=REFERENCE is cpu:reference.
    assert_eq!(with_env(Some("cpu"), Some(" REFERENCE ")).unwrap().backend().name(), "cpu:reference");
    assert_eq!(with_env(Some("cpu:Reference"), Some("reference")).unwrap().backend().name(), "cpu:reference");
    // Two variants, or a variant and an invalid LUX_FHE_NTT: refused, naming both.
    let e = with_env(Some("cpu:reference"), Some("bogus-ntt")).unwrap_err().to_string();
    assert!(e.contains("LUX_FHE_NTT=`bogus-ntt`") && e.contains("LUX_FHE_BACKEND=`cpu:reference`"), "{e}");
    // with_backend: LUX_FHE_BACKEND is not read; LUX_FHE_NTT is, by the same rule.
    with_env(Some("bogus"), Some("reference")).unwrap_err();
    assert_eq!(Engine::with_backend("cpu").unwrap().backend().name(), "cpu:reference");
    assert_eq!(Engine::with_backend("cpu:reference").unwrap().backend().name(), "cpu:reference");
    std::env::set_var("LUX_FHE_NTT", "bogus-ntt");
    let e = Engine::with_backend("cpu:reference").unwrap_err().to_string();
    assert!(e.contains("LUX_FHE_NTT=`bogus-ntt`") && e.contains("with_backend(\"cpu:reference\")"), "{e}");
    std::env::remove_var("LUX_FHE_NTT");
    not_utf8_is_an_error_naming_the_variable();
}

/// `$'cu\xffda'` in each variable: an error naming it, never "unset" (which would pick
/// the CPU). Called from the one test function.
#[cfg(unix)]
fn not_utf8_is_an_error_naming_the_variable() {
    use std::os::unix::ffi::OsStrExt;
    let junk = std::ffi::OsStr::from_bytes(b"cu\xffda");
    // LUX_FHE_BACKEND=cpu, so that the CPU backend (the reader of
    // LUX_FHE_BOOTSTRAP_THREADS) is constructed even where a GPU answers.
    for var in ["LUX_FHE_BACKEND", "LUX_FHE_NTT", "LUX_FHE_DEVICE", "LUX_FHE_BOOTSTRAP_THREADS"] {
        let _ = with_env(Some("cpu"), None);
        std::env::set_var(var, junk);
        let e = Engine::from_env().unwrap_err();
        std::env::remove_var(var);
        assert!(matches!(&e, lux_fhe::Error::Environment { variable, .. } if *variable == var), "{var}: {e:?}");
        let msg = e.to_string();
        assert!(msg.contains(var) && msg.contains("UTF-8"), "{msg}");
    }
    // with_backend does not read LUX_FHE_BACKEND.
    std::env::set_var("LUX_FHE_BACKEND", junk);
    let engine = Engine::with_backend("cpu");
    std::env::remove_var("LUX_FHE_BACKEND");
    assert_eq!(engine.unwrap().backend().kind(), BackendKind::Cpu);
}

#[cfg(not(unix))]
fn not_utf8_is_an_error_naming_the_variable() {}
