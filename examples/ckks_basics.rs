//! CKKS in a few lines: encrypt a vector, multiply, rotate, decrypt, then a polynomial
//! in `Mode::Auto`; print the precision and the time of each operation.
//!
//! `cargo run --release --example ckks_basics -- [--preset slots4096-scale40-depth2] [--threads N]`
//! The backend follows `LUX_FHE_BACKEND` (unset: the best available, else the CPU); a
//! backend without CKKS says so. `--threads 1` runs the CPU backend on one core.

use std::time::Instant;

use lux_fhe::ckks::precision_bits;
use lux_fhe::ckks::Complex;
use lux_fhe::ckks::KeygenOptions;
use lux_fhe::ckks::Mode;
use lux_fhe::ckks::Preset;
use lux_fhe::Engine;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let mut preset = Preset::Slots4096Scale40Depth2;
    let mut threads = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--preset" => preset = args.next().ok_or("--preset needs a value")?.parse()?,
            "--threads" => threads = Some(args.next().ok_or("--threads needs a value")?.parse::<usize>()?),
            other => return Err(format!("unknown argument `{other}`; see the file's header").into()),
        }
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build()?;
    pool.install(|| run(preset).map_err(|e| e.to_string()))?;
    Ok(())
}

fn run(preset: Preset) -> Result<(), Box<dyn std::error::Error>> {
    let engine = Engine::from_env()?;
    let ckks = engine.ckks(preset)?;
    let p = ckks.params();
    println!(
        "backend {}, preset {preset}: N = {}, {} slots, depth {}, dnum {}, log QP = {} (128-bit bound {})",
        engine.backend().name(),
        p.n(),
        p.slots(),
        p.depth(),
        p.dnum(),
        p.log_qp(),
        p.security_bound().map_or("none".into(), |b| b.to_string())
    );

    let t = Instant::now();
    let options = KeygenOptions { relin: true, rotations: vec![1, 2, 3, 4], conjugation: false };
    let keys = ckks.keygen(&options)?;
    let ev = ckks.evaluator(&keys.eval)?;
    println!("keys (secret, public, relinearization, 4 rotations) generated and prepared in {:.2?}", t.elapsed());

    // Small rationals, exactly representable, so the expected values are exact.
    let slots = p.slots();
    let x: Vec<Complex> = (0..slots).map(|i| Complex { re: (i % 17) as f64 / 16.0 - 0.5, im: 0.0 }).collect();
    let y: Vec<Complex> = (0..slots).map(|i| Complex { re: 0.25 + (i % 5) as f64 / 10.0, im: 0.0 }).collect();

    let time = |what: &str, t: Instant| println!("{what:<28} {:>10.2?}", t.elapsed());
    let t = Instant::now();
    let cx = ckks.encrypt(&keys.pk, &ckks.encode(&x)?)?;
    time("encrypt", t);
    let cy = ckks.encrypt(&keys.pk, &ckks.encode(&y)?)?;
    let t = Instant::now();
    let prod = ev.mul(&cx, &cy)?;
    time("multiply + relinearize", t);
    let t = Instant::now();
    let prod = ev.rescale(&prod)?;
    time("rescale", t);
    let t = Instant::now();
    let rotated = ev.rotate(&prod, 1)?;
    time("rotate by 1", t);
    let t = Instant::now();
    let hoisted = ev.rotate_hoisted(&prod, &[1, 2, 3, 4])?;
    time("4 hoisted rotations", t);
    let t = Instant::now();
    let got = ckks.decrypt(&keys.sk, &rotated)?;
    time("decrypt + decode", t);

    let want: Vec<Complex> = (0..slots).map(|i| x[(i + 1) % slots] * y[(i + 1) % slots]).collect();
    println!("(x * y) rotated by 1, first slots: {:.6?}", got.iter().take(4).map(|c| c.re).collect::<Vec<_>>());
    println!("expected:                          {:.6?}", want.iter().take(4).map(|c| c.re).collect::<Vec<_>>());
    println!("precision: {:.1} bits (largest error over all {slots} slots)", precision_bits(&got, &want));
    let h4 = ckks.decrypt(&keys.sk, &hoisted[3])?;
    let want4: Vec<Complex> = (0..slots).map(|i| x[(i + 4) % slots] * y[(i + 4) % slots]).collect();
    println!("hoisted rotation by 4: {:.1} bits", precision_bits(&h4, &want4));

    // Mode::Auto rescales every product and reconciles levels and scales, so a
    // polynomial reads as written: 0.5 x^2 + y x + 1, with y a plaintext kept prepared
    // on the backend (evaluation form) for reuse.
    let auto = ckks.evaluator_with(&keys.eval, Mode::Auto)?;
    let y_kept = auto.prepare_plaintext(&ckks.encode(&y)?)?;
    let t = Instant::now();
    let square = auto.mul_const(&auto.square(&cx)?, 0.5)?;
    let poly = auto.add_const(&auto.add(&square, &auto.mul_plain(&cx, &y_kept)?)?, 1.0)?;
    time("0.5 x^2 + y x + 1 (auto)", t);
    let got = ckks.decrypt(&keys.sk, &poly)?;
    let want: Vec<Complex> = (0..slots).map(|i| x[i] * x[i] * 0.5 + y[i] * x[i] + Complex::from(1.0)).collect();
    println!("0.5 x^2 + y x + 1: {:.1} bits, {} levels left", precision_bits(&got, &want), poly.meta().level());
    Ok(())
}
