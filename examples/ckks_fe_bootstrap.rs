//! FE functional bootstrapping (seed 2): one refresh that also evaluates identity, exp,
//! tanh, sigmoid and GELU, each through its Fourier extension; prints each function's
//! precision (seed 2's: mean error over the function's range), time and output level.
//!
//! `cargo run --release --example ckks_fe_bootstrap -- [--chain NAME] [--threads N]`
//! Default chain `fe-n15-scale29-after1` (N = 2^15, a 29-bit scale, about 6.5 GB and a
//! few seconds per function on two cores); the others are seed 2's other rows
//! (`seed_two_chains`). One that needs more memory than the machine has is refused with
//! `Error::OutOfMemory` naming both numbers before anything is made.

use std::time::Instant;

use lux_fhe::ckks::{
    precision_floor_bits, relative_precision, seed_two_chains, Complex, FeFunction, FunctionalBootstrapper,
    KeygenOptions, Mode,
};
use lux_fhe::{Engine, Seed};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut chain, mut threads) = ("fe-n15-scale29-after1".to_string(), None);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--chain" => chain = args.next().ok_or("--chain needs a name")?,
            "--threads" => threads = Some(args.next().ok_or("--threads needs a value")?.parse::<usize>()?),
            other => return Err(format!("unknown argument `{other}`; see the file's header").into()),
        }
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build()?;
    pool.install(|| run(&chain).map_err(|e| e.to_string()))?;
    Ok(())
}

fn run(name: &str) -> Result<(), Box<dyn std::error::Error>> {
    let chains = seed_two_chains();
    let chain = chains.iter().find(|c| c.name == name).ok_or_else(|| {
        let names: Vec<&str> = chains.iter().map(|c| c.name.as_str()).collect();
        format!("unknown chain `{name}`: one of {}", names.join(", "))
    })?;
    let bits = precision_floor_bits(chain.scale_bits);
    let series: Vec<_> =
        FeFunction::ALL.iter().map(|&f| Ok((f, f.series(bits)?))).collect::<Result<_, lux_fhe::Error>>()?;
    let max_degree = series.iter().map(|(_, s)| s.degree()).max().unwrap_or(1);
    let params = chain.params(max_degree)?;
    let config = chain.config();
    let mem = FunctionalBootstrapper::memory_estimate(&params, &config)?;
    println!(
        "{}: N = 2^{}, depth {}, dnum {}, log QP {}; series fitted to {bits:.0} bits (degree <= {max_degree}); needs about {:.1} GiB",
        chain.name,
        chain.log_n,
        params.depth(),
        params.dnum(),
        params.log_qp(),
        mem.total() as f64 / (1u64 << 30) as f64
    );
    let ctx = Engine::from_env()?.ckks_with_params(params)?;
    let t = Instant::now();
    let options = FunctionalBootstrapper::key_options(ctx.params(), &config)?;
    // Evaluation keys made straight into the evaluator, each over the levels it serves.
    let seed = Seed::from_os()?;
    let keys = ctx.keygen_from_seed(&seed, &KeygenOptions::default())?;
    let levels = FunctionalBootstrapper::key_levels(ctx.params(), &config)?;
    let ev = ctx.evaluator_from_secret(&keys.sk, &options, Mode::Auto, &levels, &seed)?;
    let mut fb = FunctionalBootstrapper::new(&ctx, &ev, &config, max_degree)?;
    if let Some(k) = FunctionalBootstrapper::encapsulation_keys(&ctx, &keys.sk, &config)? {
        fb.set_encapsulation_keys(&ev, &k)?;
    }
    println!("set-up {:.1} s; K = {}, exponential {:?}", t.elapsed().as_secs_f64(), fb.k(), fb.exp_shape());
    let n = ctx.params().slots();
    let xs: Vec<f64> = (0..n).map(|i| -0.5 + i as f64 / n as f64).collect();
    let values: Vec<Complex> = xs.iter().map(|&x| Complex::new(x, 0.0)).collect();
    let level = fb.input_level();
    let ct = ctx.encrypt(&keys.pk, &ctx.encode_at(&values, level, ctx.params().scale_at(level))?)?;
    for (f, s) in &series {
        let t = Instant::now();
        let y = fb.bootstrap(&ev, &ct, s)?;
        let dt = t.elapsed().as_secs_f64();
        let got: Vec<f64> = ctx.decrypt(&keys.sk, &y)?.iter().map(|c| c.re).collect();
        let want: Vec<f64> = xs.iter().map(|&x| f.eval(2.0 * f.radius() * x)).collect();
        let (prec, max) = relative_precision(&want, &got);
        println!(
            "{:>8} on [-{}, {}], degree {:>2}: {dt:.2} s, level {level} -> {}, {prec:.1} bits (max error {max:.2e})",
            f.name(),
            f.radius(),
            f.radius(),
            s.degree(),
            y.level()
        );
    }
    Ok(())
}
