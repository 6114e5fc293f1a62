//! Captures `rustc --version` at build time into `FHE_BENCH_RUSTC_VERSION` (the result
//! JSON's `environment.rustc_version`). Falls back to `RUSTC_VERSION` from the build
//! environment, then to "unknown".

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("RUSTC_VERSION").ok())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=FHE_BENCH_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
    println!("cargo:rerun-if-env-changed=RUSTC_VERSION");
}
