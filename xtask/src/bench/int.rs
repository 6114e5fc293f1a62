//! The integer rows of `cargo xtask bench`: one encrypted operation per call (a whole
//! gate circuit, one batched bootstrap per level), per width, with the circuit's gate
//! count, depth and level widths in the row. Each measured output is decrypted and
//! checked against the plain reference before its row is kept.

use std::sync::Arc;

use fhe_api::{Backend, ParamSet, Seed};
use fhe_bench::{CircuitShape, Plan, Row};
use lux_fhe::integer::conformance::{reference, Operands};
use lux_fhe::integer::{bits_to_limbs, FheUint, IntOp};
use lux_fhe::{LweCiphertext, ServerKey};

use crate::Fail;

/// What to measure: `(operation, width)` pairs and the plan for each.
pub struct IntCases {
    pub cases: Vec<(IntOp, usize)>,
    pub plan: Plan,
}

impl IntCases {
    /// `ops` at every width of `widths`, and `mul_low` at `mul_widths`.
    pub fn new(ops: &[String], widths: &[usize], mul_widths: &[usize], plan: Plan) -> Result<IntCases, Fail> {
        let mut cases = Vec::new();
        for name in ops {
            let op = IntOp::from_name(name).ok_or_else(|| {
                let valid: Vec<&str> = IntOp::GATED.iter().map(|o| o.name()).collect();
                Fail::Usage(format!("unknown integer operation `{name}`; valid: {}", valid.join(", ")))
            })?;
            cases.extend(widths.iter().map(|&w| (op, w)));
        }
        cases.extend(mul_widths.iter().map(|&w| (IntOp::MulLow, w)));
        for &(op, w) in &cases {
            let max = if op == IntOp::MulFull { 128 } else { lux_fhe::integer::MAX_WIDTH };
            if w == 0 || w > max {
                return Err(Fail::Usage(format!("{}: width {w} is not in 1..={max}", op.name())));
            }
        }
        Ok(IntCases { cases, plan })
    }

    /// Timed calls in all (for the progress bar).
    pub fn total_calls(&self) -> usize {
        self.cases.len() * self.plan.iterations * self.plan.runs
    }
}

/// `int_add_u32` and the like: one name per operation and width.
pub fn row_name(op: IntOp, width: usize) -> String {
    format!("int_{}_u{width}", op.name())
}

/// Measures every case on `backend` with one key set per parameter set.
pub fn measure(
    backend: &Arc<dyn Backend>,
    sets: &[ParamSet],
    cases: &IntCases,
    progress: &mut dyn FnMut(&fhe_bench::Progress),
) -> Result<Vec<Row>, Fail> {
    let fail = |e: lux_fhe::Error| Fail::Failed(e.to_string());
    let mut rows = Vec::new();
    for &set in sets {
        tracing::info!(backend = %backend.name(), params = %set, "generating integer bench keys");
        let keys = fhe_schemes::tfhe::keygen_from_seed(&**backend, set, &Seed::derive("lux-fhe-bench-integers", 0))
            .map_err(fail)?;
        let server = ServerKey::new(backend.clone(), &keys.ek).map_err(fail)?;
        let mut rng = Operands::new(set.id() as u64);
        for &(op, width) in &cases.cases {
            let circuit = op.circuit(width);
            let (a, b, sel) = (rng.value(width), rng.value(width), rng.next_u64() & 1 == 1);
            let ea = FheUint::encrypt_limbs(&keys.pk, width, &a).map_err(fail)?;
            let eb = FheUint::encrypt_limbs(&keys.pk, width, &b).map_err(fail)?;
            let es = fhe_schemes::tfhe::encrypt_bit(&keys.pk, sel).map_err(fail)?;
            let mut inputs: Vec<&LweCiphertext> = Vec::new();
            if op == IntOp::Select {
                inputs.push(&es);
            }
            inputs.extend(ea.bits().iter().chain(eb.bits()));

            let name = row_name(op, width);
            let label = format!("{} {set} {name}", backend.name());
            progress(&fhe_bench::Progress::Start {
                label: label.clone(),
                calls: cases.plan.iterations * cases.plan.runs,
            });
            let mut last = Vec::new();
            let stats = fhe_bench::measure_with(
                || {
                    last = server.eval_circuit(&circuit, &inputs)?;
                    Ok(())
                },
                cases.plan,
                &mut |done, calls| progress(&fhe_bench::Progress::Tick { label: label.clone(), done, calls }),
            )
            .map_err(|e| Fail::Failed(e.to_string()))?;
            progress(&fhe_bench::Progress::Finish { label });

            let bits = last.iter().map(|c| fhe_schemes::tfhe::decrypt_bit(&keys.sk, c)).collect::<Result<Vec<_>, _>>();
            let got = bits_to_limbs(&bits.map_err(fail)?);
            let want = reference(op, width, &a, &b, sel);
            if got != want {
                return Err(Fail::Failed(format!("{name}: decrypted {got:x?}, expected {want:x?}: no row reported")));
            }
            let s = circuit.stats();
            tracing::info!(case = %name, median_ns = stats.median_ns, gates = s.gates, depth = s.depth, "measured");
            let shape = CircuitShape {
                width_bits: width,
                gates: s.gates,
                depth: s.depth,
                max_level_width: s.max_width(),
                level_widths: s.level_widths,
            };
            rows.push(
                Row::new(&name, set.name(), &backend.name(), backend.ntt_variant(), 1, cases.plan, stats)
                    .with_circuit(shape),
            );
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan { iterations: 2, warmup: 1, runs: 1 }
    }

    #[test]
    fn cases_cover_every_op_and_width_and_bad_ones_are_usage_errors() {
        let Ok(c) = IntCases::new(&["add".into(), "LT".into()], &[8, 32], &[8], plan()) else {
            panic!("valid cases rejected");
        };
        assert_eq!(
            c.cases,
            vec![(IntOp::Add, 8), (IntOp::Add, 32), (IntOp::Lt, 8), (IntOp::Lt, 32), (IntOp::MulLow, 8)]
        );
        assert_eq!(c.total_calls(), 10);
        assert_eq!(row_name(IntOp::MulLow, 256), "int_mul_low_u256");
        match IntCases::new(&["div".into()], &[8], &[], plan()) {
            Err(Fail::Usage(m)) => {
                assert!(m.contains("unknown integer operation `div`") && m.contains("mul_full"), "{m}")
            }
            _ => panic!("`div` must be a usage error"),
        }
        for (ops, widths) in
            [(vec!["add".to_string()], vec![0]), (vec!["add".into()], vec![257]), (vec!["mul_full".into()], vec![256])]
        {
            assert!(matches!(IntCases::new(&ops, &widths, &[], plan()), Err(Fail::Usage(_))), "{ops:?} {widths:?}");
        }
    }
}
