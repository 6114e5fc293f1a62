//! Encrypt two 8-bit numbers, add them with gates, decrypt, and print the time per gate.
//!
//! `cargo run --release --example add8 -- [A B] [--params PN10QP27|PN11QP54|PN10QP25Q]`
//! The backend follows `LUX_FHE_BACKEND` (unset: the best available, else the CPU).

use std::time::Instant;

use lux_fhe::{Engine, Gate, LweCiphertext, ParamSet};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let mut params = ParamSet::PN10QP27;
    let mut nums = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--params" => params = args.next().ok_or("--params needs a value")?.parse()?,
            n => nums.push(n.parse::<u8>().map_err(|_| format!("`{n}` is not a number 0..=255"))?),
        }
    }
    let (x, y) = match nums[..] {
        [] => (173u8, 94u8),
        [x, y] => (x, y),
        _ => return Err("give two numbers, or none".into()),
    };

    let engine = Engine::from_env()?;
    println!("backend {}, parameter set {params}", engine.backend().name());
    let t = Instant::now();
    let keys = engine.keygen(params)?;
    let server = engine.server_key(&keys.ek)?;
    println!("keys generated and prepared in {:.2?}", t.elapsed());

    let enc = |v: u8| -> lux_fhe::Result<Vec<LweCiphertext>> {
        (0..8).map(|i| engine.encrypt_bit(&keys.pk, (v >> i) & 1 == 1)).collect()
    };
    let (a, b) = (enc(x)?, enc(y)?);

    // Ripple-carry adder; each step batches the gates that do not depend on each other.
    let t = Instant::now();
    let mut gates = 0;
    let p = server.gate_batch(Gate::Xor, &a, &b)?; // propagate, all bits at once
    let g = server.gate_batch(Gate::And, &a, &b)?; // generate, all bits at once
    gates += 16;
    let mut sum = vec![p[0].clone()];
    let mut carry = g[0].clone();
    for i in 1..8 {
        let s = server.gate_batch(Gate::Xor, &[p[i].clone()], &[carry.clone()])?;
        let pc = server.gate_batch(Gate::And, &[p[i].clone()], &[carry.clone()])?;
        carry = server.or(&g[i], &pc[0])?;
        sum.push(s[0].clone());
        gates += 3;
    }
    sum.push(carry);
    let elapsed = t.elapsed();

    let mut out = 0u16;
    for (i, ct) in sum.iter().enumerate() {
        out |= (engine.decrypt_bit(&keys.sk, ct)? as u16) << i;
    }
    println!("{x} + {y} = {out} (decrypted)");
    println!("{gates} gates in {elapsed:.2?}: {:.2?} per gate", elapsed / gates);
    if out != x as u16 + y as u16 {
        return Err(format!("wrong sum: expected {}", x as u16 + y as u16).into());
    }
    Ok(())
}
