use fhe_api::{BootstrapOps, KeyOps, ParamSet, Seed};
use std::time::Instant;
fn main() {
    let cpu = fhe_cpu::CpuBackend::oracle();
    for set in ParamSet::ALL {
        let t = Instant::now();
        let keys = cpu.keygen_from_seed(set, &Seed::derive("t", 0)).unwrap();
        let kg = t.elapsed();
        let t = Instant::now();
        let key = cpu.prepare(&keys.ek).unwrap();
        let pr = t.elapsed();
        let ct = cpu.encrypt_bit_seeded(&keys.pk, true, &Seed::derive("e", 0)).unwrap();
        let t = Instant::now();
        let enc = t.elapsed();
        let t = Instant::now();
        for _ in 0..5 { cpu.bootstrap_batch(&key, std::slice::from_ref(&ct)).unwrap(); }
        let bs = t.elapsed() / 5;
        let mut v = vec![1u64; set.params().big_n()];
        let t = Instant::now();
        for _ in 0..1000 { fhe_api::NttOps::ntt_forward(&cpu, set, &mut v).unwrap(); }
        let ntt = t.elapsed() / 1000;
        println!("{set}: keygen {kg:?} prepare {pr:?} enc {enc:?} bootstrap {bs:?} ntt {ntt:?}");
    }
}
