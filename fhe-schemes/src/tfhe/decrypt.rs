//! Decryption and phase inspection: host-side, the same for every backend.

use fhe_api::{Error, LweCiphertext, Result, SecretKey};

/// `b - <a, s> mod q`. A ciphertext of another set is `Error::ParamMismatch`; one of
/// another key (its tag is neither the key's nor none) is `Error::WrongKey`.
pub fn phase(sk: &SecretKey, ct: &LweCiphertext) -> Result<u32> {
    if sk.params() != ct.params() {
        return Err(Error::ParamMismatch { expected: sk.params().name().into(), found: ct.params().name().into() });
    }
    ct.tag().check_against(sk.tag())?;
    let mut acc = ct.b();
    for (&a, &s) in ct.a().iter().zip(sk.lwe()) {
        acc = acc.wrapping_sub(a.wrapping_mul(s as i32 as u32));
    }
    Ok(acc & ct.params().params().q_lwe_mask())
}

/// The signed distance of the phase from the nearest bit encoding (`0` or `q/4`), and
/// that bit: what the noise tests measure.
pub fn phase_error(sk: &SecretKey, ct: &LweCiphertext) -> Result<(bool, i64)> {
    let p = ct.params().params();
    let q = p.q_lwe() as i64;
    let ph = phase(sk, ct)? as i64;
    let centered = |x: i64| {
        let x = x.rem_euclid(q);
        if x >= q / 2 {
            x - q
        } else {
            x
        }
    };
    let e0 = centered(ph);
    let e1 = centered(ph - q / 4);
    Ok(if e0.abs() <= e1.abs() { (false, e0) } else { (true, e1) })
}

/// Decryption: `round(phase / (q/4))`. A ciphertext whose key tag is another key's is
/// `Error::WrongKey`; a phase that decodes to neither bit (an un-bootstrapped sum) is an
/// error.
pub fn decrypt_bit(sk: &SecretKey, ct: &LweCiphertext) -> Result<bool> {
    let p = ct.params().params();
    let ph = phase(sk, ct)?;
    let m = (ph.wrapping_add((p.q_lwe() / 8) as u32) & p.q_lwe_mask()) >> (p.lwe_modulus_log.0 - 2);
    match m {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::InvalidInput(format!(
            "phase {ph} decodes to {m}, not a bit (a sum that was not bootstrapped, or another key)"
        ))),
    }
}
