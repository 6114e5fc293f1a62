//! The noise model: predicted error variances and the decryption-failure probability
//! per gate. Floating point is used here only for *predictions* (documentation and
//! tests), never in a ciphertext path.
//!
//! Notation: `sigma^2 = eta/2` (centered binomial errors), `E[s^2] = 2/3` (uniform
//! ternary secrets), signed gadget digits in `[-Bg/2, Bg/2)` with `E[d^2] = (Bg^2+2)/12`.
//!
//! - one external product adds `V_ext = 2L * N * E[d^2] * sigma^2` (units of Q), and
//!   where the key drops the lowest digit (the multi-bit sets) its message term carries
//!   the remainder, `(1 + N E[z^2]) (Bg^2 + 2)/12` times the message bit;
//! - one GINX step multiplies two external products by `X^{+-a} - 1`, which doubles
//!   each: the blind rotation adds `V_br = n * 4 * V_ext`;
//! - mod switch `Q -> q` scales by `(q/Q)^2` and adds `(N E[z^2] + 1)/12`;
//! - the key switch adds `N * levels * (B-1)/B * sigma^2` (one fresh sample per
//!   non-zero digit);
//! - a public-key encryption has `pk_samples * (2/3) * sigma^2`;
//! - the gate's mod switch `q -> 2N` scales by `(2N/q)^2` and adds `(n E[s^2] + 1)/12`;
//!   a two-input gate sums two inputs (XOR doubles them, against twice the margin);
//!   the margin to the decision boundary is `2N/8`.

use fhe_api::tfhe::params::{ParamSet, Params};
use fhe_api::Result;

/// Predicted variances of one parameter set.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NoiseReport {
    pub params: &'static str,
    /// Variance of a bootstrapped ciphertext's phase error, units of `q`.
    pub bootstrapped_variance: f64,
    /// Variance of a fresh public-key encryption, units of `q`.
    pub fresh_variance: f64,
    /// Variance at the blind rotation's input (units of `2N`) for the worst gate input.
    pub gate_input_variance_2n: f64,
    /// Distance from an encoded phase to the decision boundary, units of `2N`.
    pub margin_2n: f64,
    /// `log2` of the decryption-failure probability per gate.
    pub log2_failure_per_gate: f64,
}

/// Computes the model of `docs/PARAMETERS.md` for one set.
pub fn predict(p: &Params) -> NoiseReport {
    let sigma2 = p.noise_eta as f64 / 2.0;
    let ternary = 2.0 / 3.0;
    let big_n = p.big_n() as f64;
    let n = p.n() as f64;
    let q_ring = p.q_ring() as f64;
    let q = p.q_lwe() as f64;
    let bg = p.bsk_base() as f64;
    let levels = p.bsk_levels.0 as f64;

    let e_d2 = (bg * bg + 2.0) / 12.0;
    let v_ext = 2.0 * levels * big_n * e_d2 * sigma2;
    let v_br = n * 4.0 * v_ext;
    let v_ms1 = v_br * (q / q_ring).powi(2) + (big_n * ternary + 1.0) / 12.0;
    let b = p.ksk_base() as f64;
    let v_ks = big_n * p.ksk_levels.0 as f64 * (b - 1.0) / b * sigma2;
    let bootstrapped = v_ms1 + v_ks;
    let fresh = p.pk_samples as f64 * ternary * sigma2;

    let worst = bootstrapped.max(fresh);
    let two_n = 2.0 * big_n;
    let ms2 = (n * ternary + 1.0) / 12.0;
    // AND-like: two inputs, margin 2N/8. XOR: four times the variance, twice the
    // margin: the same ratio, so one number covers every gate.
    let gate_input = 2.0 * worst * (two_n / q).powi(2) + ms2;
    let margin = two_n / 8.0;
    NoiseReport {
        params: p.name,
        bootstrapped_variance: bootstrapped,
        fresh_variance: fresh,
        gate_input_variance_2n: gate_input,
        margin_2n: margin,
        log2_failure_per_gate: log2_gaussian_tail(margin / gate_input.sqrt()),
    }
}

/// Predicted noise of one programmable bootstrap's input (`docs/PARAMETERS.md`,
/// "Programmable-bootstrapping sets"), key switch before blind rotation.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PbsNoiseReport {
    pub params: &'static str,
    /// Squared 2-norm of the linear combination the inputs went through (1 for a block
    /// as it comes out of a bootstrap).
    pub two_norm_sq: f64,
    /// Variance of a bootstrapped block's phase, units of `Q` (blind rotation only).
    pub bootstrapped_variance_q: f64,
    /// Variance added by the mod switch `Q -> q` and the key switch, units of `q`.
    pub key_switch_variance_q: f64,
    /// Variance at the blind rotation's input, units of `2N`.
    pub input_variance_2n: f64,
    /// Worst-case mean of that error, units of `2N` (binary secrets: the mod switch's
    /// round-half-up, `2^-(shift+1)` per secret 1, all `n` ones).
    pub bias_2n: f64,
    /// Half a slot: the distance to the next value, units of `2N`.
    pub margin_2n: f64,
    /// `log2` of the failure probability per bootstrap.
    pub log2_failure: f64,
}

/// Squared 2-norm of the largest linear combination the radix integers feed a bootstrap
/// (a bivariate table's `4x + y` has 17): the one the PBS sets' failure is quoted at.
pub const RADIX_TWO_NORM_SQ: f64 = 25.0;

/// [`predict_pbs`] for a programmable-bootstrapping set at its own encoding's slots and
/// [`RADIX_TWO_NORM_SQ`]: the failure `docs/PARAMETERS.md` quotes for the set.
pub fn predict_pbs_set(set: ParamSet) -> Result<PbsNoiseReport> {
    let slots = 2 * crate::tfhe::pbs::Encoding::for_set(set)?.modulus();
    Ok(predict_pbs(set.params(), slots, RADIX_TWO_NORM_SQ))
}

/// The model of a programmable bootstrap for a set with `slots = 2p` slots (padding
/// included), inputs of squared 2-norm `two_norm_sq`.
pub fn predict_pbs(p: &Params, slots: u64, two_norm_sq: f64) -> PbsNoiseReport {
    let sigma2 = p.noise_eta as f64 / 2.0;
    let ternary = 2.0 / 3.0;
    let big_n = p.big_n() as f64;
    let n = p.n() as f64;
    let q_ring = p.q_ring() as f64;
    let q = p.q_lwe() as f64;
    let bg = p.bsk_base() as f64;
    let levels = p.bsk_levels.0 as f64;

    let v_ext = 2.0 * levels * big_n * (bg * bg + 2.0) / 12.0 * sigma2;
    // GINX: two external products a coefficient, each times `X^(+-a) - 1` (squared norm
    // 2). Multi-bit: `2^k - 1` a group of `k`, each times `X^<a,t> - 1`; their key
    // errors are independent, so the variances add.
    let v_br = match p.grouping() {
        None => n * 4.0 * v_ext,
        Some(k) => n / k as f64 * 2.0 * ((1u32 << k) - 1) as f64 * v_ext,
    };
    // Dropped digits: the key multiplies `ACC - r`, `r` the signed remainder mod
    // `Bg^D` of both parts, so the one indicator that is 1 in a group carries the
    // error `-(r_b - r_a z)`, of variance `(1 + N E[z^2]) E[r^2]`, times `X^<a,t> - 1`;
    // bounded by every group having a 1.
    let dropped = p.bsk_dropped_levels() as i32;
    let v_round = if dropped > 0 {
        let groups = n / p.grouping().unwrap_or(1) as f64;
        groups * 2.0 * (1.0 + big_n * ternary) * (bg.powi(2 * dropped) + 2.0) / 12.0
    } else {
        0.0
    };
    let v_br = v_br + v_round;
    // Q -> q, then the key switch: a fresh sample per non-zero digit, and the rounding
    // of the `shift` low bits each `a_j` loses (uniform over 2^shift values, times z_j).
    let ms1 = (big_n * ternary + 1.0) / 12.0;
    let b = p.ksk_base() as f64;
    let fresh = big_n * p.ksk_levels.0 as f64 * (b - 1.0) / b * sigma2;
    let rounding = big_n * ternary * (4f64.powi(p.ksk_shift() as i32) - 1.0) / 12.0;
    let ks = ms1 + fresh + rounding;
    let two_n = 2.0 * big_n;
    let s2 = p.lwe_secret.second_moment();
    let ms2 = (n * s2 + 1.0) / 12.0;
    let input = two_norm_sq * v_br / (q_ring * q_ring) * two_n * two_n + ks * (two_n / q).powi(2) + ms2;
    let shift = p.lwe_modulus_log.0 - (2 * p.big_n()).trailing_zeros();
    let bias = match p.lwe_secret {
        fhe_api::tfhe::params::LweSecret::Binary => n / 2f64.powi(shift as i32 + 1),
        fhe_api::tfhe::params::LweSecret::Ternary => 0.0,
    };
    let margin = two_n / slots as f64 / 2.0;
    PbsNoiseReport {
        params: p.name,
        two_norm_sq,
        bootstrapped_variance_q: v_br,
        key_switch_variance_q: ks,
        input_variance_2n: input,
        bias_2n: bias,
        margin_2n: margin,
        log2_failure: log2_gaussian_tail((margin - bias) / input.sqrt()),
    }
}

/// `log2 P(|X| >= z sigma)` for a Gaussian, via `erfc(x) ~ exp(-x^2) / (x sqrt(pi))
/// * (1 - 1/(2x^2))`, accurate to a fraction of a bit for `z >= 4`.
pub fn log2_gaussian_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let ln = -x * x - (x * std::f64::consts::PI.sqrt()).ln() + (1.0 - 1.0 / (2.0 * x * x)).ln();
    ln / std::f64::consts::LN_2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_set_meets_the_failure_target() {
        for set in ParamSet::ALL {
            let r = predict(set.params());
            assert!(r.log2_failure_per_gate <= -64.0, "{set}: {r:?}");
        }
    }

    #[test]
    fn pbs_sets_meet_the_failure_target_at_two_norm_5() {
        for set in ParamSet::PBS {
            let slots = 2 * crate::tfhe::pbs::Encoding::for_set(set).unwrap().modulus();
            let r = predict_pbs_set(set).unwrap();
            let one = predict_pbs(set.params(), slots, 1.0);
            let q = set.params().q_lwe() as f64 / set.params().q_ring() as f64;
            // The numbers of `docs/PARAMETERS.md`'s tables (`-- --nocapture`).
            eprintln!(
                "{set}: bootstrapped sd {:.1} (units of q), after the key switch {:.1}, input sd {:.2} / {:.2} (2N), bias {:.2}, log2 failure {:.1}",
                (r.bootstrapped_variance_q * q * q).sqrt(),
                r.key_switch_variance_q.sqrt(),
                one.input_variance_2n.sqrt(),
                r.input_variance_2n.sqrt(),
                r.bias_2n,
                r.log2_failure
            );
            assert!(r.log2_failure <= -64.0, "{set}: {r:?}");
        }
    }

    #[test]
    fn gaussian_tail_matches_known_values() {
        // P(|X| >= 6 sigma) = 1.973e-9 -> log2 = -28.92
        assert!((log2_gaussian_tail(6.0) + 28.92).abs() < 0.1);
    }
}
