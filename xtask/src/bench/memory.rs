//! `bench memory [--ckks P]... [--out FILE]`: the device memory of CKKS keys and
//! ciphertexts per preset, computed from the GPU backend's layouts
//! ([`fhe_gpu::ckks_footprint`], the bytes its emulator tests count), not measured on a
//! device: one ciphertext and one plaintext at the top level, the relinearization key,
//! one rotation key, and the Galois keys of the default bootstrap configuration, each
//! prepared up to the level it serves (`Bootstrapper::key_levels`). Printed as a
//! markdown table (the one in `docs/CKKS.md`), and written to `--out` when given.

use std::path::PathBuf;

use fhe_api::ckks::params::{Params, Preset};
use fhe_gpu::memory::switch_key_bytes;
use fhe_schemes::ckks::{BootstrapConfig, Bootstrapper};

use crate::Fail;

/// `bytes` in MiB with one decimal, or GiB with two from 1 GiB up.
fn size(bytes: u64) -> String {
    let mib = bytes as f64 / (1u64 << 20) as f64;
    if mib >= 1024.0 {
        format!("{:.2} GiB", mib / 1024.0)
    } else {
        format!("{mib:.1} MiB")
    }
}

/// The Galois keys of the default bootstrap at `params` (count and bytes), or why there
/// are none: a chain too short, or no default configuration at this `N` (the sparse
/// secret it bootstraps through has a bound from `N = 2^15` only).
fn bootstrap_keys(params: &Params) -> Result<(usize, u64), String> {
    let config = BootstrapConfig::default();
    let no_config = |e: fhe_api::Error| {
        tracing::debug!(preset = params.name(), error = %e, "no default bootstrap");
        format!("no default bootstrap at N = 2^{}", params.n().trailing_zeros())
    };
    let depth = Bootstrapper::depth(params, &config).map_err(no_config)?;
    if params.max_level() < depth + 1 {
        return Err(format!("depth {} < {}", params.max_level(), depth + 1));
    }
    let levels = Bootstrapper::key_levels(params, &config).map_err(no_config)?;
    let bytes = levels.galois.values().map(|&l| switch_key_bytes(params, l, true)).sum();
    Ok((levels.galois.len(), bytes))
}

/// The table, one row per preset.
pub(super) fn table(presets: &[Preset]) -> String {
    let mut out = String::from(
        "| preset | N | limbs (Q + P) | dnum | ciphertext | plaintext | relinearization key | rotation key | \
         bootstrap Galois keys |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for &preset in presets {
        let params = preset.params();
        let f = fhe_gpu::ckks_footprint(params);
        let boot = match bootstrap_keys(params) {
            Ok((count, bytes)) => format!("{} ({count} keys)", size(bytes)),
            Err(why) => format!("n/a ({why})"),
        };
        out.push_str(&format!(
            "| `{}` | 2^{} | {} + {} | {} | {} | {} | {} | {} | {} |\n",
            f.name,
            f.n.trailing_zeros(),
            f.q_limbs,
            f.p_limbs,
            f.dnum,
            size(f.ciphertext),
            size(f.plaintext),
            size(f.relin_key),
            size(f.galois_key),
            boot
        ));
    }
    out
}

pub(super) fn run(presets: Vec<Preset>, out: Option<PathBuf>) -> Result<(), Fail> {
    let presets = if presets.is_empty() { Preset::ALL.to_vec() } else { presets };
    let table = table(&presets);
    println!("device memory per CKKS preset (computed from the GPU backend's layout, not measured):");
    print!("{table}");
    if let Some(path) = out {
        std::fs::write(&path, &table).map_err(|e| Fail::Failed(format!("{}: {e}", path.display())))?;
        println!("written to {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per preset; the small preset cannot bootstrap, the production one can.
    #[test]
    fn the_table_has_a_row_per_preset() {
        let t = table(&[Preset::Slots4096Scale40Depth2, Preset::Slots32768Scale40Depth34]);
        let rows: Vec<&str> = t.lines().skip(2).collect();
        assert_eq!(rows.len(), 2, "{t}");
        assert!(rows[0].starts_with("| `slots4096-scale40-depth2` | 2^13 | 3 + 1 | 3 |") && rows[0].contains("n/a"));
        assert!(rows[1].contains("keys)"), "{t}");
    }
}
