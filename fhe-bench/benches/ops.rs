//! Criterion benches of every operation on the CPU backend.
//!
//! `cargo bench -p fhe-bench` measures `PN10QP27`; set `FHE_BENCH_ALL_PARAMS=1` for every
//! production parameter set, and `FHE_BENCH_NTT=<variant>` for a CPU NTT variant other
//! than the default. The JSON result files of `cargo xtask bench` come from
//! `fhe_bench::run_suite`, not from here; these benches are for local comparisons with
//! criterion's own statistics.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use fhe_api::{BootstrapOps, NttOps, ParamSet, Seed};
use fhe_bench::Fixture;
use fhe_cpu::CpuBackend;
use fhe_schemes::tfhe::gates::{self, Gate};

fn param_sets() -> Vec<ParamSet> {
    if std::env::var("FHE_BENCH_ALL_PARAMS").is_ok_and(|v| !v.is_empty() && v != "0") {
        ParamSet::ALL.to_vec()
    } else {
        vec![ParamSet::PN10QP27]
    }
}

fn backend() -> CpuBackend {
    CpuBackend::new(std::env::var("FHE_BENCH_NTT").ok().as_deref()).expect("FHE_BENCH_NTT names a supported variant")
}

fn bench_ntt(c: &mut Criterion) {
    let backend = backend();
    for params in param_sets() {
        let fixture = Fixture::new(&backend, params, "lux-fhe-criterion-v1").expect("keygen");
        let mut group = c.benchmark_group(format!("ntt/{params}"));
        for polys in [1usize, 32, 1024] {
            let n = params.params().big_n();
            group.throughput(Throughput::Elements(polys as u64));
            if polys >= 1024 {
                group.sample_size(10);
            }
            let input = fixture.ntt_input(polys);
            let mut data = input.clone();
            group.bench_with_input(BenchmarkId::new("forward", polys), &polys, |b, _| {
                b.iter(|| backend.ntt_forward(params, black_box(&mut data)).expect("ntt"))
            });
            let mut data = input.clone();
            group.bench_with_input(BenchmarkId::new("inverse", polys), &polys, |b, _| {
                b.iter(|| backend.ntt_inverse(params, black_box(&mut data)).expect("ntt"))
            });
            debug_assert_eq!(input.len(), polys * n);
        }
        group.finish();
    }
}

fn bench_bootstrap(c: &mut Criterion) {
    let backend = backend();
    for params in param_sets() {
        let mut fixture = Fixture::new(&backend, params, "lux-fhe-criterion-v1").expect("keygen");
        let cts = fixture.ciphertexts(64, 0).expect("encrypt");
        let key = fixture.prepared(&backend).expect("prepare");
        let mut group = c.benchmark_group(format!("bootstrap/{params}"));
        group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));

        let rotated = backend.blind_rotate_batch(key, &cts[..1]).expect("blind rotate");
        group.bench_function("key_switch", |b| b.iter(|| backend.key_switch_batch(key, black_box(&rotated))));
        group.bench_function("bootstrap", |b| b.iter(|| backend.bootstrap_batch(key, black_box(&cts[..1]))));
        group.throughput(Throughput::Elements(64));
        group.bench_function("bootstrap_batch/64", |b| b.iter(|| backend.bootstrap_batch(key, black_box(&cts))));
        group.finish();

        let mut group = c.benchmark_group(format!("gates/{params}"));
        group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
        for gate in Gate::ALL {
            group.bench_function(gate.name(), |b| {
                b.iter(|| gates::gate_batch(&backend, key, gate, black_box(&cts[0..1]), black_box(&cts[1..2])))
            });
        }
        group.bench_function("mux", |b| {
            b.iter(|| gates::mux_batch(&backend, key, black_box(&cts[0..1]), &cts[1..2], &cts[2..3]))
        });
        group.bench_function("not", |b| b.iter(|| gates::not(black_box(&cts[0]))));
        group.finish();
    }
}

fn bench_keys(c: &mut Criterion) {
    let backend = backend();
    for params in param_sets() {
        let fixture = Fixture::new(&backend, params, "lux-fhe-criterion-v1").expect("keygen");
        let mut group = c.benchmark_group(format!("keys/{params}"));
        group.sample_size(10);
        let mut i = 0u64;
        group.bench_function("keygen", |b| {
            b.iter_batched(
                || {
                    i += 1;
                    Seed::derive("lux-fhe-criterion-keygen", i)
                },
                |seed| fhe_schemes::tfhe::keygen_from_seed(&backend, params, &seed),
                BatchSize::PerIteration,
            )
        });
        let seed = Seed::derive("lux-fhe-criterion-encrypt", 0);
        group.bench_function("encrypt", |b| {
            b.iter(|| fhe_schemes::tfhe::encrypt_bit_seeded(&fixture.keys.pk, true, &seed))
        });
        let ct = fhe_schemes::tfhe::encrypt_bit_seeded(&fixture.keys.pk, true, &seed).expect("encrypt");
        group
            .bench_function("decrypt", |b| b.iter(|| fhe_schemes::tfhe::decrypt_bit(&fixture.keys.sk, black_box(&ct))));
        group.finish();
    }
}

criterion_group!(benches, bench_ntt, bench_bootstrap, bench_keys);
criterion_main!(benches);
