//! Plain-circuit checks at every width (fast), the documented gate counts, and the
//! encrypted checks of [`super::conformance`] on the CPU backend.

use std::sync::OnceLock;

use std::sync::Arc;

use fhe_api::{Backend, ParamSet};
use fhe_cpu::CpuBackend;

use super::conformance::{self, reference, IntegerFixture, Operands};
use super::gates::circuit::{self, IntOp, PrefixNetwork};
use super::gates::netlist::{Builder, CircuitStats};
use super::{bits_to_limbs, limbs_to_bits};
use crate::tfhe::{decrypt_bit, encrypt_bit, keygen_from_seed, ServerKey};

fn cpu_backend() -> Arc<dyn Backend> {
    Arc::new(CpuBackend::new(None).expect("the CPU backend"))
}

const WIDTHS: [usize; 6] = [8, 16, 32, 64, 128, 256];

/// The circuit of `op` in the clear on limbs.
fn eval_plain(op: IntOp, width: usize, a: &[u64], b: &[u64], sel: bool) -> Vec<u64> {
    let c = op.circuit(width);
    let mut inputs = Vec::new();
    if op == IntOp::Select {
        inputs.push(sel);
    }
    inputs.extend(limbs_to_bits(a, width).unwrap());
    if !matches!(op, IntOp::Shl(_) | IntOp::Shr(_)) {
        inputs.extend(limbs_to_bits(b, width).unwrap());
    }
    bits_to_limbs(&c.eval_plain(&inputs).unwrap())
}

/// Random operands plus the corner cases (0, 1, all ones, equal operands).
fn operands(width: usize, rng: &mut Operands, random: usize) -> Vec<(Vec<u64>, Vec<u64>)> {
    let ones = {
        let mut v = vec![u64::MAX; width.div_ceil(64)];
        conformance::truncate(&mut v, width);
        v
    };
    let zero = vec![0u64; width.div_ceil(64)];
    let mut one = zero.clone();
    one[0] = 1;
    let mut cases = vec![
        (zero.clone(), zero.clone()),
        (ones.clone(), ones.clone()),
        (ones.clone(), one.clone()),
        (one.clone(), ones.clone()),
        (zero.clone(), ones.clone()),
    ];
    for _ in 0..random {
        let a = rng.value(width);
        let b = if rng.next_u64().is_multiple_of(8) { a.clone() } else { rng.value(width) };
        cases.push((a, b));
    }
    cases
}

#[test]
fn plain_circuits_match_the_reference_at_every_width() {
    let mut rng = Operands::new(1);
    for width in WIDTHS.into_iter().chain([1, 3, 13]) {
        // The multipliers' circuits are large at 256 bits: fewer cases there.
        let random = if width >= 128 { 6 } else { 24 };
        let mut ops = IntOp::GATED.to_vec();
        ops.extend([
            IntOp::Shl(0),
            IntOp::Shl(1),
            IntOp::Shl(width / 2 + 1),
            IntOp::Shl(width),
            IntOp::Shr(3),
            IntOp::Shr(width + 5),
        ]);
        for op in ops {
            if op == IntOp::MulFull && width > 128 {
                continue;
            }
            for (a, b) in operands(width, &mut rng, random) {
                let sel = rng.next_u64() & 1 == 1;
                assert_eq!(
                    eval_plain(op, width, &a, &b, sel),
                    reference(op, width, &a, &b, sel),
                    "{} at {width} bits: a = {a:x?}, b = {b:x?}",
                    op.name()
                );
            }
        }
    }
}

#[test]
fn plain_256_bit_full_product_through_a_128_bit_pair() {
    // mul_full at 256 bits has 512 output bits: check it against the reference too.
    let mut rng = Operands::new(2);
    for (a, b) in operands(256, &mut rng, 3) {
        assert_eq!(eval_plain(IntOp::MulFull, 256, &a, &b, false), reference(IntOp::MulFull, 256, &a, &b, false));
    }
}

#[test]
fn every_prefix_network_adds_right_at_every_width() {
    let mut rng = Operands::new(3);
    for network in PrefixNetwork::ALL {
        for width in WIDTHS.into_iter().chain([1, 2, 5, 13, 100]) {
            for carry_in in [false, true] {
                let mut b = Builder::new();
                let x = b.inputs(width);
                let y = b.inputs(width);
                let (mut sum, carry) =
                    circuit::add_with(&mut b, &x, &y, crate::integer::Bit::constant_of(carry_in), network);
                sum.push(carry);
                let c = b.finish(sum);
                for (a, bb) in operands(width, &mut rng, 8) {
                    let mut inputs = limbs_to_bits(&a, width).unwrap();
                    inputs.extend(limbs_to_bits(&bb, width).unwrap());
                    let got = bits_to_limbs(&c.eval_plain(&inputs).unwrap());
                    let mut cin = vec![0u64; width.div_ceil(64)];
                    cin[0] = carry_in as u64;
                    let wide = reference(
                        IntOp::Add,
                        width + 1,
                        &reference(IntOp::Add, width + 1, &a, &bb, false),
                        &cin,
                        false,
                    );
                    assert_eq!(got, wide, "{} at {width} bits, carry in {carry_in}", network.name());
                }
            }
        }
    }
}

#[test]
fn an_encrypted_carry_in_adds_too() {
    let mut b = Builder::new();
    let x = b.inputs(8);
    let y = b.inputs(8);
    let cin = b.input();
    let (mut sum, carry) = circuit::add_with(&mut b, &x, &y, cin, PrefixNetwork::Sklansky);
    sum.push(carry);
    let c = b.finish(sum);
    let mut rng = Operands::new(4);
    for _ in 0..64 {
        let (a, bb, ci) = (rng.next_u64() & 0xff, rng.next_u64() & 0xff, rng.next_u64() & 1);
        let mut inputs = limbs_to_bits(&[a], 8).unwrap();
        inputs.extend(limbs_to_bits(&[bb], 8).unwrap());
        inputs.push(ci == 1);
        assert_eq!(bits_to_limbs(&c.eval_plain(&inputs).unwrap()), vec![a + bb + ci]);
    }
}

/// The tables of docs/INTEGERS.md, generated from the circuits: per operation, and the
/// adder per prefix network.
fn integer_tables() -> [String; 2] {
    let mut out =
        String::from("| operation | width | gates | depth (levels) | widest level |\n|---|---:|---:|---:|---:|\n");
    for op in IntOp::GATED {
        for width in WIDTHS {
            if op == IntOp::MulFull && width > 128 {
                continue;
            }
            let s = op.circuit(width).stats();
            out.push_str(&format!("| `{}` | {width} | {} | {} | {} |\n", op.name(), s.gates, s.depth, s.max_width()));
        }
    }
    let mut adders =
        String::from("| adder network | width | gates | depth (levels) | widest level |\n|---|---:|---:|---:|---:|\n");
    for network in PrefixNetwork::ALL {
        for width in WIDTHS {
            let mut b = Builder::new();
            let x = b.inputs(width);
            let y = b.inputs(width);
            let sum = circuit::add_with(&mut b, &x, &y, crate::integer::Bit::FALSE, network).0;
            let s = b.finish(sum).stats();
            adders.push_str(&format!(
                "| {} | {width} | {} | {} | {} |\n",
                network.name(),
                s.gates,
                s.depth,
                s.max_width()
            ));
        }
    }
    [out, adders]
}

#[test]
fn documented_gate_counts_match_the_circuits() {
    let doc = include_str!("../../../docs/INTEGERS.md");
    for table in integer_tables() {
        assert!(
            doc.contains(&table),
            "docs/INTEGERS.md is out of date; regenerate with `cargo test --release -p lux-fhe print_integer_tables -- --ignored --nocapture`:\n{table}"
        );
    }
}

#[test]
#[ignore = "prints the tables of docs/INTEGERS.md"]
fn print_integer_tables() {
    for table in integer_tables() {
        println!("{table}");
    }
}

/// The GPU arithmetic of docs/perf/2026-12-03.md ("GPU targets: the arithmetic"): 256-bit
/// operations under the CUDA issue's floor
/// (150 us for one bootstrap call, 100,000 bootstraps/s batched).
#[test]
#[ignore = "prints the modelled GPU times of docs/perf/2026-12-03.md"]
fn print_gpu_model() {
    let (latency, throughput) = (150e-6, 1e5);
    let mut rows: Vec<(String, CircuitStats)> = Vec::new();
    for network in PrefixNetwork::ALL {
        let mut b = Builder::new();
        let x = b.inputs(256);
        let y = b.inputs(256);
        let sum = circuit::add_with(&mut b, &x, &y, crate::integer::Bit::FALSE, network).0;
        rows.push((format!("add, {}", network.name()), b.finish(sum).stats()));
    }
    for (op, w) in [(IntOp::Lt, 256), (IntOp::Eq, 256), (IntOp::MulLow, 256), (IntOp::MulFull, 128)] {
        rows.push((format!("{} ({w}-bit operands)", op.name()), op.circuit(w).stats()));
    }
    println!("| 256-bit operation | gates | levels | gates / 100k/s | levels x 150 us | modelled | bootstraps/s for 12 ms | for 32 ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, s) in rows {
        // The least throughput meeting `budget` at this latency (bisection; the model
        // falls as throughput grows, to `depth * latency`).
        let need = |budget: f64| -> f64 {
            if s.modelled_seconds(latency, f64::INFINITY) > budget {
                return f64::INFINITY;
            }
            let (mut lo, mut hi) = (1.0f64, 1e12f64);
            for _ in 0..200 {
                let mid = (lo * hi).sqrt();
                if s.modelled_seconds(latency, mid) > budget {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            hi
        };
        println!(
            "| {name} | {} | {} | {:.1} ms | {:.2} ms | {:.1} ms | {:.0} | {:.0} |",
            s.gates,
            s.depth,
            s.gates as f64 / throughput * 1e3,
            s.depth as f64 * latency * 1e3,
            s.modelled_seconds(latency, throughput) * 1e3,
            need(12e-3),
            need(32e-3),
        );
    }
}

#[test]
fn operands_of_different_widths_are_zero_extended() {
    let mut b = Builder::new();
    let x = b.inputs(8);
    let y = b.inputs(3);
    let sum = circuit::add(&mut b, &x, &y, PrefixNetwork::BrentKung);
    let diff = circuit::sub(&mut b, &y, &x, PrefixNetwork::Sklansky);
    let less = circuit::lt(&mut b, &y, &x);
    let same = circuit::eq(&mut b, &x, &y);
    let prod = circuit::mul(&mut b, &x, &y, 11, PrefixNetwork::KoggeStone);
    let mut outputs = sum;
    outputs.extend(diff);
    outputs.extend([less, same]);
    outputs.extend(prod);
    let c = b.finish(outputs);
    let mut rng = Operands::new(5);
    for _ in 0..32 {
        let (p, q) = (rng.next_u64() & 0xff, rng.next_u64() & 7);
        let mut inputs = limbs_to_bits(&[p], 8).unwrap();
        inputs.extend(limbs_to_bits(&[q], 3).unwrap());
        let out = c.eval_plain(&inputs).unwrap();
        let field = |from: usize, len: usize| bits_to_limbs(&out[from..from + len])[0];
        assert_eq!(field(0, 8), (p + q) & 0xff);
        assert_eq!(field(8, 8), q.wrapping_sub(p) & 0xff);
        assert_eq!((out[16], out[17]), (q < p, q == p));
        assert_eq!(field(18, 11), (p * q) & 0x7ff);
    }
}

#[test]
fn shifts_cost_no_gates() {
    for width in WIDTHS {
        for k in [0, 1, width - 1, width, width + 1] {
            assert_eq!(IntOp::Shl(k).circuit(width).stats().gates, 0);
            assert_eq!(IntOp::Shr(k).circuit(width).stats().gates, 0);
        }
    }
}

// Encrypted, on the CPU backend with PN10QP27 (about 30 ms a bootstrap on two cores,
// less per gate in wide levels).

fn cpu() -> &'static IntegerFixture {
    static FIXTURE: OnceLock<IntegerFixture> = OnceLock::new();
    FIXTURE.get_or_init(|| IntegerFixture::new(cpu_backend(), ParamSet::PN10QP27, "lux-fhe-integer-tests"))
}

#[test]
fn cpu_encrypted_bad_operands_are_errors() {
    conformance::bad_operands_are_errors(cpu());
}

#[test]
fn cpu_encrypted_8_bit_add_sub_shifts() {
    for op in [IntOp::Add, IntOp::Sub, IntOp::Shl(3), IntOp::Shr(5)] {
        conformance::random_operands_decrypt_right(cpu(), op, 8, 3, 10);
    }
}

#[test]
fn cpu_encrypted_8_bit_mul() {
    conformance::random_operands_decrypt_right(cpu(), IntOp::MulLow, 8, 2, 11);
    conformance::random_operands_decrypt_right(cpu(), IntOp::MulFull, 8, 2, 12);
}

#[test]
fn cpu_encrypted_8_bit_compare_min_max_select() {
    for op in [IntOp::Eq, IntOp::Lt, IntOp::Le, IntOp::Min, IntOp::Max, IntOp::Select] {
        conformance::random_operands_decrypt_right(cpu(), op, 8, 2, 13);
    }
}

#[test]
fn cpu_encrypted_16_and_32_bit_add() {
    conformance::random_operands_decrypt_right(cpu(), IntOp::Add, 16, 2, 14);
    conformance::random_operands_decrypt_right(cpu(), IntOp::Add, 32, 2, 15);
}

#[test]
fn slow_cpu_encrypted_256_bit_add_and_lt() {
    conformance::random_operands_decrypt_right(cpu(), IntOp::Add, 256, 1, 16);
    conformance::random_operands_decrypt_right(cpu(), IntOp::Lt, 256, 2, 17);
}

#[test]
#[ignore = "195,288 bootstraps: 44 minutes on two CPU cores (docs/INTEGERS.md); run on a GPU backend"]
fn slow_cpu_encrypted_256_bit_mul_low() {
    conformance::random_operands_decrypt_right(cpu(), IntOp::MulLow, 256, 1, 18);
}

/// MUX nodes evaluated encrypted (the cheap form) beside gates in the same level and
/// feeding a second level: every assignment of three bits, in one circuit of eight copies.
#[test]
fn mux_nodes_decrypt_right_beside_gates() {
    let backend = cpu_backend();
    let keys = keygen_from_seed(&*backend, ParamSet::PN10QP27, &fhe_api::Seed::derive("netlist-mux", 0)).unwrap();
    let server = ServerKey::new(backend, &keys.ek).unwrap();
    let mut b = Builder::new();
    let mut outs = Vec::new();
    for _ in 0..8 {
        let i = b.inputs(3);
        let m = b.mux(i[0], i[1], i[2]);
        let x = b.xor(i[0], i[1]);
        let m2 = b.mux(x, m, !i[2]);
        outs.extend([m, x, m2]);
    }
    let c = b.finish(outs);
    let s = c.stats();
    assert_eq!((s.muxes, s.depth, s.level_widths.clone()), (16, 2, vec![8 * 3, 8 * 2]));
    let plain: Vec<bool> = (0..24).map(|k| (k / 3) >> (k % 3) & 1 == 1).collect();
    let enc: Vec<_> = plain.iter().map(|&v| encrypt_bit(&keys.pk, v).unwrap()).collect();
    let got = server.eval_circuit(&c, &enc.iter().collect::<Vec<_>>()).unwrap();
    let want = c.eval_plain(&plain).unwrap();
    for (copy, bits) in plain.chunks(3).enumerate() {
        let m = if bits[0] { bits[1] } else { bits[2] };
        let x = bits[0] ^ bits[1];
        assert_eq!(&want[3 * copy..3 * copy + 3], &[m, x, if x { m } else { !bits[2] }]);
    }
    let got: Vec<bool> = got.iter().map(|ct| decrypt_bit(&keys.sk, ct).unwrap()).collect();
    assert_eq!(got, want);
}
