//! Compiles the shared kernel source once per parameter set, as C++ for the emulator.

use std::path::PathBuf;

use fhe_api::ParamSet;
use fhe_gpu::{kernel_source, Dialect};

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let prelude = include_str!("cpp/prelude.hpp");
    let launcher = include_str!("cpp/launcher.hpp");
    let mut build = cc::Build::new();
    build.cpp(true).std("c++20").opt_level(2).warnings(false);
    for set in ParamSet::ALL {
        let name = set.name().to_ascii_lowercase();
        let unit = format!(
            "{prelude}\n{}\n#define LUX_EMU_LAUNCH lux_emu_{name}_launch\n{launcher}\n",
            kernel_source(set, Dialect::HostEmu)
        );
        let path = out.join(format!("emu_{name}.cpp"));
        std::fs::write(&path, unit).expect("write generated unit");
        build.file(&path);
    }
    build.compile("lux_gpu_emu");
    println!("cargo:rustc-link-lib=stdc++");
    for dep in ["cpp/prelude.hpp", "cpp/launcher.hpp", "../fhe-gpu/kernels", "../fhe-gpu/src/source.rs"] {
        println!("cargo:rerun-if-changed={dep}");
    }
}
