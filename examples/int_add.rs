//! Encrypt two 8-bit integers, add, compare and take the larger with gate circuits
//! (one batched bootstrap per circuit level), decrypt, and print the cost of each.
//!
//! `cargo run --release --example int_add -- [A B]`
//! The backend follows `LUX_FHE_BACKEND` (unset: the best available, else the CPU).

use std::time::Instant;

use lux_fhe::{Engine, FheUint, IntOp, ParamSet};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let nums = std::env::args()
        .skip(1)
        .map(|n| n.parse::<u8>().map_err(|_| format!("`{n}` is not a number 0..=255")))
        .collect::<Result<Vec<_>, _>>()?;
    let (x, y) = match nums[..] {
        [] => (173u8, 94u8),
        [x, y] => (x, y),
        _ => return Err("give two numbers, or none".into()),
    };

    let engine = Engine::from_env()?;
    println!("backend {}, parameter set PN10QP27", engine.backend().name());
    let keys = engine.keygen(ParamSet::PN10QP27)?;
    let server = engine.server_key(&keys.ek)?;
    let a = FheUint::encrypt(&keys.pk, 8, x.into())?;
    let b = FheUint::encrypt(&keys.pk, 8, y.into())?;

    let shape = |op: IntOp| {
        let s = op.circuit(8).stats();
        format!("{} gates in {} levels", s.gates, s.depth)
    };
    let t = Instant::now();
    let sum = server.add(&a, &b)?;
    let add_time = t.elapsed();
    let t = Instant::now();
    let less = server.lt(&a, &b)?;
    let larger = server.select(&less, &b, &a)?;
    let max_time = t.elapsed();

    let got_sum = sum.decrypt_u128(&keys.sk)?;
    let got_less = engine.decrypt_bit(&keys.sk, &less)?;
    let got_max = larger.decrypt_u128(&keys.sk)?;
    println!("{x} + {y} = {got_sum} (mod 256, decrypted): {}, {add_time:.2?}", shape(IntOp::Add));
    println!(
        "{x} < {y} is {got_less}, max = {got_max}: {} + {}, {max_time:.2?}",
        shape(IntOp::Lt),
        shape(IntOp::Select)
    );
    if got_sum != u128::from(x.wrapping_add(y)) || got_less != (x < y) || got_max != u128::from(x.max(y)) {
        return Err("wrong result".into());
    }
    Ok(())
}
