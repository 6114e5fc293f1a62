//! CKKS bootstrapping: a ciphertext whose levels are spent, refreshed and multiplied
//! again; prints the memory the configuration needs, the keys, each phase's time and the
//! precision.
//!
//! `cargo run --release --example ckks_bootstrap -- [--threads N]`
//! Runs `slots32768-scale59-depth22` (N = 2^16, OpenFHE's bootstrapping chain): about
//! 16 GB and a few minutes on two cores (most of it key generation). A machine with less
//! memory available gets `Error::OutOfMemory` naming both numbers before anything is made.

use std::time::Instant;

use lux_fhe::ckks::{precision_bits, BootstrapConfig, Bootstrapper, Complex, KeygenOptions, Mode, Preset};
use lux_fhe::{Engine, Seed};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut threads = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => threads = Some(args.next().ok_or("--threads needs a value")?.parse::<usize>()?),
            other => return Err(format!("unknown argument `{other}`; see the file's header").into()),
        }
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build()?;
    pool.install(|| run().map_err(|e| e.to_string()))?;
    Ok(())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let engine = Engine::from_env()?;
    let ctx = engine.ckks(Preset::Slots32768Scale59Depth22)?;
    let params = ctx.params().clone();
    let config = BootstrapConfig::default();
    let mem = Bootstrapper::memory_estimate(&params, &config)?;
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    println!(
        "{}: bootstrap depth {}, needs about {:.1} GiB (keys {:.1}, diagonals {:.1}, working {:.1})",
        params.name(),
        Bootstrapper::depth(&params, &config)?,
        gib(mem.total()),
        gib(mem.keys),
        gib(mem.plaintexts),
        gib(mem.working)
    );
    let t = Instant::now();
    let options = Bootstrapper::key_options(&params, &config)?;
    // The secret and public keys first; the evaluation keys are made straight into the
    // evaluator, each kept over the levels it serves (the memory estimate above).
    let seed = Seed::from_os()?;
    let keys = ctx.keygen_from_seed(&seed, &KeygenOptions::default())?;
    let levels = Bootstrapper::key_levels(&params, &config)?;
    let ev = ctx.evaluator_from_secret(&keys.sk, &options, Mode::Auto, &levels, &seed)?;
    let mut bs = Bootstrapper::new(&ctx, &ev, &config)?;
    // A uniform ternary secret bootstraps through a sparse one (sparse secret encapsulation).
    if let Some(sse) = Bootstrapper::encapsulation_keys(&ctx, &keys.sk, &config)? {
        bs.set_encapsulation_keys(&ev, &sse)?;
    }
    println!(
        "keys: relinearization, conjugation and {} rotations; set-up {:.1} s",
        options.rotations.len(),
        t.elapsed().as_secs_f64()
    );
    let n = params.slots();
    let values: Vec<Complex> = (0..n).map(|i| Complex::new((i as f64 * 0.37).sin(), 0.0)).collect();
    // A ciphertext at level 1: one level from spent.
    let spent = ctx.encrypt(&keys.pk, &ctx.encode_at(&values, 1, params.scale_at(1))?)?;
    let t = Instant::now();
    let (fresh, phases) = bs.bootstrap_timed(&ev, &spent)?;
    println!(
        "bootstrap {:.2} s (ModRaise {:.2}, CoeffsToSlots {:.2}, EvalMod {:.2}, SlotsToCoeffs {:.2}): level 1 -> {}, {:.1} bits",
        t.elapsed().as_secs_f64(),
        phases.mod_raise,
        phases.coeffs_to_slots,
        phases.eval_mod,
        phases.slots_to_coeffs,
        fresh.level(),
        precision_bits(&ctx.decrypt(&keys.sk, &fresh)?, &values)
    );
    let squared = ev.mul(&fresh, &fresh)?;
    let want: Vec<Complex> = values.iter().map(|&v| v * v).collect();
    println!(
        "x^2 after the bootstrap: level {}, {:.1} bits",
        squared.level(),
        precision_bits(&ctx.decrypt(&keys.sk, &squared)?, &want)
    );
    Ok(())
}
