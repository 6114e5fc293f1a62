//! Every evaluator operation against plaintext arithmetic, and small polynomials in both
//! modes.

use std::sync::Arc;

use fhe_api::ckks::{Ciphertext, Preset};
use fhe_api::Backend;

use super::{encrypt, random_values, rotate_plain, setup, ROTATIONS};
use crate::ckks::{precision_bits, Complex, Context, Mode};

/// One operation's measured precision.
#[derive(Debug, Clone)]
pub struct OpPrecision {
    pub op: &'static str,
    pub bits: f64,
}

/// Every evaluator operation against plaintext arithmetic; panics when an operation's
/// precision falls below `min_bits`. Returns the measured precisions.
pub fn ops_match_plaintext(backend: Arc<dyn Backend>, preset: Preset, min_bits: f64) -> Vec<OpPrecision> {
    let (ctx, keys, ev) = setup(backend, preset, 1);
    let slots = ctx.params().slots();
    let (x, y) = (random_values(slots, 11), random_values(slots, 12));
    let (cx, cy) = (encrypt(&ctx, &keys, &x, 1), encrypt(&ctx, &keys, &y, 2));
    let dec = |h: &Ciphertext| ctx.decrypt(&keys.sk, h).expect("decrypt");
    let zip = |f: &dyn Fn(Complex, Complex) -> Complex| x.iter().zip(&y).map(|(&a, &b)| f(a, b)).collect::<Vec<_>>();
    let map = |f: &dyn Fn(Complex) -> Complex| x.iter().map(|&a| f(a)).collect::<Vec<_>>();
    let mut out = Vec::new();
    let mut check = |op: &'static str, got: &Ciphertext, want: &[Complex]| {
        let bits = precision_bits(&dec(got), want);
        assert!(bits >= min_bits, "{preset}: {op} has {bits:.1} bits of precision, below {min_bits}");
        out.push(OpPrecision { op, bits });
    };
    let px = ctx.encode(&x).unwrap();
    check("encrypt", &cx, &x);
    check("encrypt_os_randomness", &ctx.encrypt(&keys.pk, &px).unwrap(), &x);
    check("encrypt_sk_os_randomness", &ctx.encrypt_sk(&keys.sk, &px).unwrap(), &x);
    check("add", &ev.add(&cx, &cy).unwrap(), &zip(&|a, b| a + b));
    check("sub", &ev.sub(&cx, &cy).unwrap(), &zip(&|a, b| a - b));
    check("negate", &ev.negate(&cx).unwrap(), &map(&|a| -a));
    check("mul_relin_rescale", &ev.mul_rescale(&cx, &cy).unwrap(), &zip(&|a, b| a * b));
    let relinearized = ev.relinearize(&ev.tensor(&cx, &cy).unwrap()).unwrap();
    check("tensor_relinearize_rescale", &ev.rescale(&relinearized).unwrap(), &zip(&|a, b| a * b));
    let mut acc = ev.tensor(&cx, &cy).unwrap();
    ev.mul_then_add(&mut acc, &cx, &cx).unwrap();
    let sum = ev.rescale(&ev.relinearize(&acc).unwrap()).unwrap();
    check("mul_then_add", &sum, &zip(&|a, b| a * b + a * a));
    let mut acc = cx.clone();
    ev.add_assign(&mut acc, &cy).unwrap();
    ev.sub_assign(&mut acc, &cx).unwrap();
    ev.add_assign(&mut acc, &cy).unwrap();
    check("add_assign_sub_assign", &acc, &zip(&|_, b| b * Complex::from(2.0)));
    check("add_assign_left_its_clone", &cx, &x);

    let py = ctx.encode(&y).unwrap();
    let kept = ev.prepare_plaintext(&py).unwrap();
    check("add_plain", &ev.add_plain(&cx, &py).unwrap(), &zip(&|a, b| a + b));
    check("sub_plain_prepared", &ev.sub_plain(&cx, &kept).unwrap(), &zip(&|a, b| a - b));
    check("mul_plain_rescale", &ev.rescale(&ev.mul_plain(&cx, &py).unwrap()).unwrap(), &zip(&|a, b| a * b));
    let mut acc = ev.mul_plain(&cy, &kept).unwrap();
    ev.mul_plain_then_add(&mut acc, &cx, &kept).unwrap();
    check("mul_plain_then_add", &ev.rescale(&acc).unwrap(), &zip(&|a, b| (a + b) * b));

    let c = Complex::new(0.375, -0.25);
    check("add_const_complex", &ev.add_const(&cx, c).unwrap(), &map(&|a| a + c));
    check("sub_const", &ev.sub_const(&cx, 0.5).unwrap(), &map(&|a| a - Complex::from(0.5)));
    check("mul_const_rescale", &ev.rescale(&ev.mul_const(&cx, -1.25).unwrap()).unwrap(), &map(&|a| a * -1.25));
    check("mul_const_complex_rescale", &ev.rescale(&ev.mul_const(&cx, c).unwrap()).unwrap(), &map(&|a| a * c));
    let mut acc = ev.mul_const(&cy, 2.0).unwrap();
    ev.mul_const_then_add(&mut acc, &cx, 0.5).unwrap();
    check("mul_const_then_add", &ev.rescale(&acc).unwrap(), &zip(&|a, b| b * 2.0 + a * 0.5));
    check("mul_int", &ev.mul_int(&cx, 3).unwrap(), &map(&|a| a * 3.0));
    check("mul_i", &ev.mul_i(&cx).unwrap(), &map(&|a| a * Complex::I));
    for k in ROTATIONS {
        check("rotate", &ev.rotate(&cx, k).unwrap(), &rotate_plain(&x, k));
    }
    check("conjugate", &ev.conjugate(&cx).unwrap(), &map(&|a| a.conj()));
    let dropped = ev.drop_to_level(&cx, 0).unwrap();
    check("drop_to_level", &dropped, &x);
    let target = ctx.params().scale_at(cx.level() - 2);
    let moved = ev.rescale_to(&cx, cx.level() - 2, target).unwrap();
    assert!(moved.scale().same_as(target) && moved.level() == cx.level() - 2, "{preset}: rescale_to");
    check("rescale_to", &moved, &x);
    // A sum of rotations times plaintexts with one lazy ModDown (a baby-step sum).
    let steps = [0i64, 1, 3, -1];
    let diags: Vec<Vec<Complex>> = (0..steps.len()).map(|i| random_values(slots, 300 + i as u64)).collect();
    let ext: Vec<_> = diags
        .iter()
        .map(|d| {
            ev.prepare_plaintext(&ctx.encode_extended(d, cx.level(), ctx.params().default_scale()).unwrap()).unwrap()
        })
        .collect();
    let terms: Vec<(i64, &fhe_api::ckks::PreparedPlaintext)> = steps.iter().copied().zip(ext.iter()).collect();
    let lazy = ev.rescale(&ev.sum_of_rotations(&cx, &terms).unwrap()).unwrap();
    let mut want = vec![Complex::default(); slots];
    for (&k, d) in steps.iter().zip(&diags) {
        for ((w, r), d) in want.iter_mut().zip(rotate_plain(&x, k)).zip(d) {
            *w += r * *d;
        }
    }
    check("sum_of_rotations", &lazy, &want);
    // Multiply, then rotate: the end-to-end check.
    let prod = ev.mul_rescale(&cx, &cy).unwrap();
    check("mul_then_rotate", &ev.rotate(&prod, 3).unwrap(), &rotate_plain(&zip(&|a, b| a * b), 3));
    out
}

/// `x * x + x` and `c * x + x` at `preset`, in the manual mode (with the one-call moves
/// `rescale_to` and `drop_to_level`) and in the automatic mode (as written), both within
/// `min_bits`; the two modes agree.
pub fn both_modes_evaluate_polynomials(backend: Arc<dyn Backend>, preset: Preset, min_bits: f64) {
    let (ctx, keys, manual) = setup(backend, preset, 7);
    let auto = ctx.evaluator_with(&keys.eval, Mode::Auto).unwrap();
    let x = random_values(ctx.params().slots(), 71);
    let cx = encrypt(&ctx, &keys, &x, 71);
    let c = 0.625;
    let want_sq: Vec<Complex> = x.iter().map(|&a| a * a + a).collect();
    let want_lin: Vec<Complex> = x.iter().map(|&a| a * c + a).collect();
    let bits =
        |ctx: &Context, got: &Ciphertext, want: &[Complex]| precision_bits(&ctx.decrypt(&keys.sk, got).unwrap(), want);

    let xx = manual.rescale(&manual.mul(&cx, &cx).unwrap()).unwrap();
    let manual_sq = manual.add(&xx, &manual.rescale_to(&cx, xx.level(), xx.scale()).unwrap()).unwrap();
    let cx1 = manual.rescale(&manual.mul_const(&cx, c).unwrap()).unwrap();
    assert!(cx1.scale().same_as(cx.scale()), "{preset}: a rescaled constant product keeps the scale");
    let manual_lin = manual.add(&cx1, &manual.drop_to_level(&cx, cx1.level()).unwrap()).unwrap();
    let auto_sq = auto.add(&auto.mul(&cx, &cx).unwrap(), &cx).unwrap();
    let auto_lin = auto.add(&auto.mul_const(&cx, c).unwrap(), &cx).unwrap();
    for (what, got, want) in [
        ("manual x*x + x", &manual_sq, &want_sq),
        ("manual c*x + x", &manual_lin, &want_lin),
        ("auto x*x + x", &auto_sq, &want_sq),
        ("auto c*x + x", &auto_lin, &want_lin),
    ] {
        let b = bits(&ctx, got, want);
        eprintln!("{preset}: {what}: level {}, {b:.1} bits", got.level());
        assert!(b >= min_bits, "{preset}: {what} has {b:.1} bits, below {min_bits}");
    }
    assert_eq!((auto_sq.level(), auto_lin.level()), (manual_sq.level(), manual_lin.level()), "{preset}: levels");
}
