//! A short measurement of the CPU oracle: `cargo run -p fhe-bench --release --example quick
//! -- [OUT_DIR] [ITERS]`. Writes a result file under `OUT_DIR/cpu-local/` (default
//! `target/bench-quick`), a chart beside it, and prints the table. The real entry point
//! is `cargo xtask bench`; this is a smoke run of the library.

use std::path::PathBuf;

use fhe_api::{Backend, ParamSet};
use fhe_bench::{format_table, render_chart, run_report, stderr_progress, EquivalenceGate, Iterations, SuiteConfig};
use fhe_cpu::CpuBackend;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(args.next().unwrap_or_else(|| "target/bench-quick".to_string()));
    let iters: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);
    let backend = CpuBackend::new(None)?;
    let config = SuiteConfig {
        iterations: Iterations::uniform(iters),
        warmup: 1,
        runs: 2,
        ntt_batch_sizes: vec![1, 32],
        bootstrap_batch_size: 8,
        ..SuiteConfig::default()
    };
    let mut progress = stderr_progress(config.total_calls());
    let report =
        run_report(&backend, &[ParamSet::PN10QP27], &config, "cpu-local", EquivalenceGate::not_run(), &mut progress)?;
    let path = fhe_bench::write_results(&out, "cpu-local", &report)?;
    let chart = out.join("chart.svg");
    render_chart(std::slice::from_ref(&path), &chart)?;
    print!("{}", format_table(&report));
    println!("wrote {} and {} ({})", path.display(), chart.display(), backend.name());
    Ok(())
}
