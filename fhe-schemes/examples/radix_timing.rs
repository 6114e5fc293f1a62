//! Times programmable bootstrapping and radix integer operations on the CPU backend
//! (`--set`, default `M2C2`), medians of `--runs` calls after one discarded, and prints
//! one JSON object (`pbs_batch16_ms` is the whole batch of 16).
//!
//! `cargo run --release -p fhe-schemes --example radix_timing -- [--runs R] [--widths 8,64] [--set M2C2G2]`
//! Threads follow `RAYON_NUM_THREADS`. The gate integers' add and `lt` (`PN10QP27`) are
//! timed in the same process at the same widths, for `docs/INTEGERS.md`'s comparison.

use std::sync::Arc;
use std::time::Instant;

use fhe_api::rng::Seed;
use fhe_api::{Backend, ParamSet};
use fhe_schemes::integer::radix::{add, compare, Propagation, RadixUint};
use fhe_schemes::integer::FheUint;
use fhe_schemes::tfhe::pbs::{encrypt_block_seeded, PbsKey};
use fhe_schemes::tfhe::{keygen_from_seed, ServerKey};

fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let runs: usize = arg("--runs").map_or(Ok(5), |r| r.parse())?;
    let widths: Vec<usize> =
        arg("--widths").unwrap_or_else(|| "8,64".into()).split(',').map(str::parse).collect::<Result<_, _>>()?;

    let set: ParamSet = arg("--set").unwrap_or_else(|| "M2C2".into()).parse()?;
    if !ParamSet::PBS.contains(&set) {
        return Err(format!("--set: {set} is no programmable-bootstrapping set (M2C2, M2C2G2, M2C2G3)").into());
    }
    let backend: Arc<dyn Backend> = Arc::new(fhe_cpu::CpuBackend::new(None)?);
    let gate_keys = keygen_from_seed(&*backend, ParamSet::PN10QP27, &Seed::derive("lux-fhe-radix-timing", 2))?;
    let gates = ServerKey::new(backend.clone(), &gate_keys.ek)?;
    let t = Instant::now();
    let keys = keygen_from_seed(&*backend, set, &Seed::derive("lux-fhe-radix-timing", 0))?;
    let key = PbsKey::new(backend, &keys.ek)?;
    let keygen_s = t.elapsed().as_secs_f64();
    let seed = Seed::derive("lux-fhe-radix-timing", 1);
    let block = encrypt_block_seeded(&keys.sk, 3, &seed, 0)?;
    let lut = key.lut(|x| (x + 1) % 16)?;
    let one = median_ms(runs, || {
        key.apply_batch(std::slice::from_ref(&block), &lut).expect("pbs");
    });
    let batch: Vec<_> = (0..16).map(|i| encrypt_block_seeded(&keys.sk, i % 16, &seed, i)).collect::<Result<_, _>>()?;
    let sixteen = median_ms(runs, || {
        key.apply_batch(&batch, &lut).expect("pbs");
    });
    let mut rows = Vec::new();
    for &w in &widths {
        let mask = if w >= 128 { u128::MAX } else { (1u128 << w) - 1 };
        let (x, y) = (0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834u128 & mask, 0x2545_f491_4f6c_dd1du128 & mask);
        let limbs = |v: u128| [v as u64, (v >> 64) as u64];
        let a = RadixUint::encrypt_limbs_seeded(&keys.sk, w, &limbs(x), &Seed::derive("a", w as u64))?;
        let b = RadixUint::encrypt_limbs_seeded(&keys.sk, w, &limbs(y), &Seed::derive("b", w as u64))?;
        for (name, how) in [("add_sequential", Propagation::Sequential), ("add_prefix", Propagation::Prefix)] {
            let ms = median_ms(runs, || {
                let s = add::add(&key, &a, &b, how).expect("add");
                assert_eq!(s.decrypt_u128(&keys.sk).expect("decrypt"), x.wrapping_add(y) & mask);
            });
            rows.push(format!(r#"{{"op":"{name}","bits":{w},"median_ms":{ms:.1}}}"#));
        }
        let ms = median_ms(runs, || {
            let r = compare::lt(&key, &a, &b).expect("lt");
            assert_eq!(r.decrypt(&keys.sk).expect("decrypt"), x < y);
        });
        rows.push(format!(r#"{{"op":"lt","bits":{w},"median_ms":{ms:.1}}}"#));
        let (ga, gb) = (FheUint::encrypt(&gate_keys.pk, w, x)?, FheUint::encrypt(&gate_keys.pk, w, y)?);
        let ms = median_ms(runs, || {
            let s = gates.add(&ga, &gb).expect("gate add");
            assert_eq!(s.decrypt_u128(&gate_keys.sk).expect("decrypt"), x.wrapping_add(y) & mask);
        });
        rows.push(format!(r#"{{"op":"gate_add","params":"PN10QP27","bits":{w},"median_ms":{ms:.1}}}"#));
        let ms = median_ms(runs, || {
            let r = gates.lt(&ga, &gb).expect("gate lt");
            assert_eq!(fhe_schemes::tfhe::decrypt_bit(&gate_keys.sk, &r).expect("decrypt"), x < y);
        });
        rows.push(format!(r#"{{"op":"gate_lt","params":"PN10QP27","bits":{w},"median_ms":{ms:.1}}}"#));
    }
    println!(
        r#"{{"kind":"radix_timing","params":"{set}","threads":{},"runs":{runs},"keygen_and_prepare_s":{keygen_s:.1},"pbs_one_ms":{one:.1},"pbs_batch16_ms":{sixteen:.1},"rows":[{}]}}"#,
        rayon::current_num_threads(),
        rows.join(",")
    );
    Ok(())
}
