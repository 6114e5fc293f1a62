//! Our radix add, `lt` and `mul` (`--set`, default `M2C2`, CPU backend) against TFHE-rs 1.8's `FheUint64` /
//! `FheUint256` with its default parameters, in one process, both in one rayon pool of
//! `--threads` threads, rounds alternated (the side that goes first alternates, each
//! round one discarded call per side). Writes one JSON file and prints it
//! (`radix-vs-tfhe-<threads>t.json` for the default `--ops add,lt`, else
//! `radix-vs-tfhe-<ops joined by +>-<threads>t.json`, so a `mul` run keeps the add rows).
//!
//! `cargo run --release -p fhe-bench --features peers --example radix_vs_tfhe --
//!  [--threads 2] [--rounds 4] [--calls 3] [--widths 64,256] [--ops add,lt,mul] [--set M2C2G2]
//!  [--peer-pfail 128|64] [--out bench/results/radix]` (a set other than `M2C2` adds
//!  `-<set>` to the file name, `--peer-pfail 64` adds `-peer2m64`)
//!
//! `--peer-pfail 64` runs TFHE-rs with its newest classic p-fail 2^-64 set
//! (`V1_6_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M64`, p-fail 2^-72.2) instead of its
//! default (2^-129.6): the comparison at a peer failure probability no lower than ours.

use std::path::PathBuf;
use std::sync::Arc;

use fhe_api::rng::Seed;
use fhe_api::{Backend, ParamSet};
use fhe_bench::stats::{alternate, median, Call};
use fhe_schemes::integer::radix::{add, compare, mul, Propagation, RadixUint};
use fhe_schemes::tfhe::keygen_from_seed;
use fhe_schemes::tfhe::pbs::PbsKey;
use tfhe::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let threads: usize = arg("--threads").map_or(Ok(2), |v| v.parse())?;
    let rounds: usize = arg("--rounds").map_or(Ok(4), |v| v.parse())?;
    let calls: usize = arg("--calls").map_or(Ok(3), |v| v.parse())?;
    let widths: Vec<usize> =
        arg("--widths").unwrap_or_else(|| "64".into()).split(',').map(str::parse).collect::<Result<_, _>>()?;
    let ops_arg = arg("--ops").unwrap_or_else(|| "add,lt".into());
    let ops: Vec<String> = ops_arg.split(',').map(str::to_string).collect();
    if let Some(bad) = ops.iter().find(|o| !["add", "lt", "mul"].contains(&o.as_str())) {
        return Err(format!("--ops: unknown operation `{bad}` (add, lt, mul)").into());
    }
    let out = PathBuf::from(arg("--out").unwrap_or_else(|| "bench/results/radix".into()));
    let peer_pfail: u32 = arg("--peer-pfail").map_or(Ok(128), |v| v.parse())?;
    let (peer_params, peer_name, peer_log2_pfail) = match peer_pfail {
        128 => {
            let p = tfhe::shortint::parameters::PARAM_MESSAGE_2_CARRY_2_KS_PBS;
            (p, "PARAM_MESSAGE_2_CARRY_2_KS_PBS (default)", p.log2_p_fail)
        }
        64 => {
            let p = tfhe::shortint::parameters::v1_6::V1_6_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M64;
            (p, "V1_6_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M64", p.log2_p_fail)
        }
        other => return Err(format!("--peer-pfail {other}: 128 (TFHE-rs's default) or 64").into()),
    };
    let set: ParamSet = arg("--set").unwrap_or_else(|| "M2C2".into()).parse()?;
    if !ParamSet::PBS.contains(&set) {
        return Err(format!("--set: {set} is no programmable-bootstrapping set (M2C2, M2C2G2, M2C2G3)").into());
    }
    // The global pool of `threads`, and every call from this ordinary thread, as a user's
    // program makes them: both libraries' batches run on the pool, and our lone
    // rotations may take a second core (`LUX_FHE_BOOTSTRAP_THREADS`), which they refuse
    // inside a pool's worker.
    rayon::ThreadPoolBuilder::new().num_threads(threads).build_global()?;

    let rows = (|| -> Result<Vec<String>, Box<dyn std::error::Error + Send + Sync>> {
        let backend: Arc<dyn Backend> = Arc::new(fhe_cpu::CpuBackend::new(None)?);
        let keys = keygen_from_seed(&*backend, set, &Seed::derive("lux-fhe-radix-vs-tfhe", 0))?;
        let key = PbsKey::new(backend, &keys.ek)?;
        let (ck, sk) = tfhe::generate_keys(tfhe::ConfigBuilder::with_custom_parameters(peer_params).build());
        tfhe::set_server_key(sk.clone());
        let mut rows = Vec::new();
        for &w in &widths {
            let (x, y) = (0x9e37_79b9_7f4a_7c15u64, 0x2545_f491_4f6c_dd1du64);
            let limbs = |v: u64| vec![v, v.rotate_left(17), v ^ 0x55, v.rotate_right(9)];
            let (lx, ly) = (limbs(x)[..w / 64].to_vec(), limbs(y)[..w / 64].to_vec());
            let a = RadixUint::encrypt_limbs_seeded(&keys.sk, w, &lx, &Seed::derive("a", w as u64))?;
            let b = RadixUint::encrypt_limbs_seeded(&keys.sk, w, &ly, &Seed::derive("b", w as u64))?;
            for op in ops.iter().map(String::as_str) {
                let mut ours: Call = match op {
                    "add" => Box::new(|| {
                        add::add(&key, &a, &b, Propagation::Auto).expect("add");
                    }),
                    "mul" => Box::new(|| {
                        mul::mul(&key, &a, &b, Propagation::Auto).expect("mul");
                    }),
                    _ => Box::new(|| {
                        compare::lt(&key, &a, &b).expect("lt");
                    }),
                };
                let (t_ours, t_theirs, ratios) = match w {
                    64 => {
                        let (ta, tb) = (tfhe::FheUint64::encrypt(x, &ck), tfhe::FheUint64::encrypt(y, &ck));
                        let mut theirs: Call = match op {
                            "add" => Box::new(|| {
                                let _ = &ta + &tb;
                            }),
                            "mul" => Box::new(|| {
                                let _ = &ta * &tb;
                            }),
                            _ => Box::new(|| {
                                let _ = ta.lt(&tb);
                            }),
                        };
                        alternate(rounds, calls, &mut ours, &mut theirs)
                    }
                    256 => {
                        let big = |l: &[u64]| tfhe::integer::U256::from((l[0] as u128 | (l[1] as u128) << 64, l[2] as u128 | (l[3] as u128) << 64));
                        let (ta, tb) = (tfhe::FheUint256::encrypt(big(&lx), &ck), tfhe::FheUint256::encrypt(big(&ly), &ck));
                        let mut theirs: Call = match op {
                            "add" => Box::new(|| {
                                let _ = &ta + &tb;
                            }),
                            "mul" => Box::new(|| {
                                let _ = &ta * &tb;
                            }),
                            _ => Box::new(|| {
                                let _ = ta.lt(&tb);
                            }),
                        };
                        alternate(rounds, calls, &mut ours, &mut theirs)
                    }
                    _ => return Err(format!("width {w}: 64 or 256").into()),
                };
                let (mo, mt) = (median(&t_ours), median(&t_theirs));
                let (lo, hi) = ratios.iter().fold((f64::MAX, 0f64), |(l, h), &r| (l.min(r), h.max(r)));
                rows.push(format!(
                    r#"{{"op":"{op}","bits":{w},"ours_median_ms":{mo:.1},"tfhe_rs_median_ms":{mt:.1},"ratio":{:.3},"round_ratio_lo":{lo:.3},"round_ratio_hi":{hi:.3}}}"#,
                    mo / mt
                ));
            }
        }
        Ok(rows)
    })()
    .map_err(|e| e.to_string())?;
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default();
    let pfail = fhe_schemes::tfhe::noise::predict_pbs_set(set)?.log2_failure;
    let json = format!(
        r#"{{"kind":"radix_vs_tfhe","what":"radix integers ({set}, CPU backend) vs TFHE-rs 1.8.2 FheUint","tfhe_rs_params":"{peer_name}","set":"{set}","threads":{threads},"rounds":{rounds},"calls_per_round":{calls},"cpu":"{cpu}","ours":"Propagation::Auto","ours_log2_p_fail":{pfail:.1},"ours_p_fail_note":"model, 2-norm 5","tfhe_rs_log2_p_fail":{peer_log2_pfail:.1},"rows":[{}]}}"#,
        rows.join(",")
    );
    std::fs::create_dir_all(&out)?;
    let mut tail = if set == ParamSet::M2C2 { String::new() } else { format!("-{set}") };
    if peer_pfail == 64 {
        tail.push_str("-peer2m64");
    }
    let file = match ops_arg.as_str() {
        "add,lt" => out.join(format!("radix-vs-tfhe-{threads}t{tail}.json")),
        _ => out.join(format!("radix-vs-tfhe-{}-{threads}t{tail}.json", ops.join("+"))),
    };
    std::fs::write(&file, &json)?;
    println!("{json}");
    eprintln!("wrote {}", file.display());
    Ok(())
}
