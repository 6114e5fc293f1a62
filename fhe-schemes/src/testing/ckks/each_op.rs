//! Each `CkksOps` method on its own, a device backend against the CPU oracle: the same
//! random resident inputs (ciphertexts, plaintexts, extended plaintexts, constants) and
//! real keys, every result downloaded and compared, so a difference names the operation
//! (and so the kernel) that made it; and the bad input every backend refuses with a
//! typed error. The GPU emulator's and the wgpu backend's tests run it.

use std::sync::Arc;

use fhe_api::ckks::params::Preset;
use fhe_api::ckks::{CkksMeta, HostCiphertext, KeySet, Params, Plaintext, SwitchingKey};
use fhe_api::ops::{CkksOps, ConstResidues};
use fhe_api::ring::automorphism::{conjugation_element, galois_element_for_rotation};
use fhe_api::rng::SplitMix64;
use fhe_api::{Backend, Result};

/// What both backends start from, on the host.
pub struct OpInputs {
    pub params: Arc<Params>,
    pub keys: KeySet,
    pub a: HostCiphertext,
    pub b: HostCiphertext,
    pub plain: Plaintext,
    pub extended: Plaintext,
    pub real: ConstResidues,
    pub complex: ConstResidues,
}

fn words(params: &Params, limbs: usize, rng: &mut SplitMix64) -> Vec<u64> {
    let n = params.n();
    (0..limbs).flat_map(|i| (0..n).map(|_| rng.below(params.q()[i].0)).collect::<Vec<_>>()).collect()
}

/// Random resident inputs and the suite's keys at `preset`, made on `oracle`.
pub fn op_inputs(oracle: Arc<dyn Backend>, preset: Preset) -> OpInputs {
    let (ctx, keys, _) = super::setup(oracle, preset, 37);
    let params = ctx.params().clone();
    let top = params.max_level();
    let mut rng = SplitMix64::new(0x37);
    let meta = CkksMeta::new(params.clone(), top, params.default_scale(), keys.pk.tag()).unwrap();
    let ct = |rng: &mut SplitMix64| {
        let (c0, c1) = (words(&params, top + 1, rng), words(&params, top + 1, rng));
        HostCiphertext::from_raw(meta.clone(), c0, c1).unwrap()
    };
    let (a, b) = (ct(&mut rng), ct(&mut rng));
    let plain = Plaintext::from_raw(meta.clone(), words(&params, top + 1, &mut rng)).unwrap();
    let n = params.n();
    let special: Vec<u64> =
        params.p().iter().flat_map(|p| (0..n).map(|_| rng.below(p.0)).collect::<Vec<_>>()).collect();
    let extended = Plaintext::extended_from_reduced(meta, words(&params, top + 1, &mut rng), special).unwrap();
    let residues = |rng: &mut SplitMix64| params.q().iter().map(|q| rng.below(q.0)).collect::<Vec<_>>();
    let real = ConstResidues { re: residues(&mut rng), im: Vec::new() };
    let complex = ConstResidues { re: residues(&mut rng), im: residues(&mut rng) };
    OpInputs { params, keys, a, b, plain, extended, real, complex }
}

/// Every operation on `ops` from `x`, each result downloaded under its name.
pub fn each_op(ops: &dyn CkksOps, x: &OpInputs) -> Result<Vec<(&'static str, HostCiphertext)>> {
    let p = &x.params;
    let top = p.max_level();
    // Words do not depend on the scale; 2^30 fits every level of every preset.
    let scale = fhe_api::ckks::Scale::pow2(30).unwrap();
    let meta = |level: usize| CkksMeta::new(p.clone(), level, scale, x.keys.pk.tag()).unwrap();
    let m = meta(top);
    let (a, b) = (ops.upload(&x.a)?, ops.upload(&x.b)?);
    let (pt, ext_pt) = (ops.upload_plaintext(&x.plain)?, ops.upload_plaintext(&x.extended)?);
    let rlk = ops.prepare_key(x.keys.eval.relin.as_ref().expect("relinearization key"))?;
    let galois = |g: u64| -> Result<_> {
        let key: &SwitchingKey = x.keys.eval.galois.get(&g).expect("a suite Galois key");
        ops.prepare_key(key)
    };
    let n = p.ring_degree();
    let (r1, r2, conj) = (
        galois(galois_element_for_rotation(n, 1))?,
        galois(galois_element_for_rotation(n, 2))?,
        galois(conjugation_element(n))?,
    );
    let mut out = Vec::new();
    let mut put = |name, ct: &fhe_api::ckks::Ciphertext| -> Result<()> {
        out.push((name, ops.download(ct)?));
        Ok(())
    };
    put("upload", &a)?;
    put("add", &ops.add(&a, &b, m.clone())?)?;
    put("sub", &ops.sub(&a, &b, m.clone())?)?;
    put("negate", &ops.negate(&a, m.clone())?)?;
    let mut acc = a.clone();
    ops.add_assign(&mut acc, &b)?;
    put("add_assign", &acc)?;
    put("add_assign left the clone", &a)?;
    ops.sub_assign(&mut acc, &a)?;
    ops.sub_assign(&mut acc, &a)?;
    put("sub_assign", &acc)?;
    put("add_plain", &ops.add_plain(&a, &pt, m.clone())?)?;
    put("sub_plain", &ops.sub_plain(&a, &pt, m.clone())?)?;
    put("mul_plain", &ops.mul_plain(&a, &pt, m.clone())?)?;
    let mut acc = b.clone();
    ops.mul_plain_then_add(&mut acc, &a, &pt)?;
    put("mul_plain_then_add", &acc)?;
    put("add_const (real)", &ops.add_const(&a, &x.real, m.clone())?)?;
    put("add_const (complex)", &ops.add_const(&a, &x.complex, m.clone())?)?;
    put("mul_const (real)", &ops.mul_const(&a, &x.real, m.clone())?)?;
    put("mul_const (complex)", &ops.mul_const(&a, &x.complex, m.clone())?)?;
    let mut acc = b.clone();
    ops.mul_const_then_add(&mut acc, &a, &x.complex)?;
    put("mul_const_then_add", &acc)?;
    for (name, k) in [("mul_monomial 3", 3), ("mul_monomial N/2", p.n() / 2), ("mul_monomial N+5", p.n() + 5)] {
        put(name, &ops.mul_monomial(&a, k, m.clone())?)?;
    }
    let t = ops.tensor(&a, &b, m.clone())?;
    put("tensor + relinearize", &ops.relinearize(&t, &rlk, m.clone())?)?;
    let mut acc = t.clone();
    ops.mul_then_add(&mut acc, &b, &a)?;
    put("mul_then_add + relinearize", &ops.relinearize(&acc, &rlk, m.clone())?)?;
    put("degree-2 add + relinearize", &ops.relinearize(&ops.add(&t, &a, m.clone())?, &rlk, m.clone())?)?;
    put("mul_relin", &ops.mul_relin(&a, &b, &rlk, m.clone())?)?;
    put("rescale", &ops.rescale(&a, meta(top - 1))?)?;
    put("rescale twice", &ops.rescale(&ops.rescale(&b, meta(top - 1))?, meta(top - 2))?)?;
    let low = ops.drop_to_level(&a, meta(0))?;
    put("drop_to_level", &low)?;
    put("mod_raise", &ops.mod_raise(&low, m.clone())?)?;
    put("apply_galois", &ops.apply_galois(&a, &r1, m.clone())?)?;
    put("conjugate", &ops.apply_galois(&b, &conj, m.clone())?)?;
    let h = ops.hoist(&a)?;
    let rs = ops.apply_galois_hoisted(&h, &[&r2, &r1], m.clone())?;
    put("apply_galois_hoisted[0]", &rs[0])?;
    put("apply_galois_hoisted[1]", &rs[1])?;
    let lazy = ops.apply_galois_lazy(&h, &[&r1, &r2], m.clone())?;
    put("apply_galois_lazy + mod_down", &ops.mod_down(&lazy[0], m.clone())?)?;
    let lifted = ops.lift(&b, m.clone())?;
    put("lift + mod_down", &ops.mod_down(&lifted, m.clone())?)?;
    let mut sum = ops.ext_mul_plain(&lazy[0], &ext_pt, m.clone())?;
    put("ext_mul_plain + mod_down", &ops.mod_down(&sum, m.clone())?)?;
    ops.ext_mul_plain_then_add(&mut sum, &lazy[1], &ext_pt)?;
    ops.ext_mul_plain_then_add(&mut sum, &lifted, &ext_pt)?;
    put("ext_mul_plain_then_add + mod_down", &ops.mod_down(&sum, m.clone())?)?;
    let dot = ops.ext_dot_plain(&[&lazy[1], &lifted], &[&ext_pt, &ext_pt], m.clone())?;
    put("ext_dot_plain + mod_down", &ops.mod_down(&dot, m.clone())?)?;
    // A lower level: the digit, ModDown and rescale constants of another level.
    let mid = ops.drop_to_level(&b, meta(top - 1))?;
    put("apply_galois at level L-1", &ops.apply_galois(&mid, &r2, meta(top - 1))?)?;
    put("mul_relin at level L-1", &ops.mul_relin(&mid, &mid, &rlk, meta(top - 1))?)?;
    put("mul_plain at level L-1", &ops.mul_plain(&mid, &pt, meta(top - 1))?)?;
    Ok(out)
}

/// `device`'s words equal `oracle`'s for every operation at `preset`, and the inputs are
/// not trivial (products and rotations changed most words).
pub fn each_op_equals_the_oracle(device: &dyn CkksOps, oracle: Arc<dyn Backend>, preset: Preset) {
    let x = op_inputs(oracle.clone(), preset);
    let got = each_op(device, &x).expect("the device");
    let want = each_op(oracle.ckks().expect("the oracle declares CKKS"), &x).expect("the oracle");
    assert_eq!(got.len(), want.len());
    for ((name, g), (_, w)) in got.iter().zip(&want) {
        assert!(g == w, "{preset}: {name}: the device's words differ from the oracle's");
    }
    assert!(want.iter().filter(|(_, c)| c.c0() != x.a.c0()).count() > want.len() / 2);
}

/// Bad input to `gpu` is a clear error, never a panic: a constant of the wrong length, a
/// monomial past 2N, a Galois key used as the relinearization key and the reverse,
/// ModRaise above level 0, a rescale at level 0 or to the wrong level, a plain plaintext
/// in a lazy product, a ciphertext of `oracle` (a backend named `cpu`).
pub fn bad_input_is_a_clear_error(gpu: &dyn CkksOps, oracle: Arc<dyn Backend>) {
    let x = op_inputs(oracle.clone(), Preset::Slots4096Scale40Depth2);
    let p = &x.params;
    let meta = |level: usize| CkksMeta::new(p.clone(), level, p.default_scale(), x.keys.pk.tag()).unwrap();
    let m = meta(p.max_level());
    let a = gpu.upload(&x.a).unwrap();
    let short = ConstResidues { re: vec![1], im: Vec::new() };
    let err = |r: Result<fhe_api::ckks::Ciphertext>| r.expect_err("an error").to_string();
    assert!(err(gpu.add_const(&a, &short, m.clone())).contains("residues per part"));
    assert!(err(gpu.mul_monomial(&a, 2 * p.n(), m.clone())).contains("below 2N"));
    let rlk = gpu.prepare_key(x.keys.eval.relin.as_ref().unwrap()).unwrap();
    let g = gpu.prepare_key(x.keys.eval.galois.values().next().unwrap()).unwrap();
    assert!(err(gpu.apply_galois(&a, &rlk, m.clone())).contains("not a Galois key"));
    assert!(err(gpu.mul_relin(&a, &a, &g, m.clone())).contains("relinearization key"));
    assert!(err(gpu.mod_raise(&a, m.clone())).contains("mod_raise"));
    let low = gpu.drop_to_level(&a, meta(0)).unwrap();
    assert!(err(gpu.rescale(&low, meta(0))).contains("rescale"));
    assert!(err(gpu.rescale(&a, m.clone())).contains("result metadata"));
    let h = gpu.hoist(&a).unwrap();
    let lazy = gpu.apply_galois_lazy(&h, &[&g], m.clone()).unwrap();
    let plain = gpu.upload_plaintext(&x.plain).unwrap();
    assert!(gpu
        .ext_mul_plain(&lazy[0], &plain, m.clone())
        .expect_err("a plain plaintext")
        .to_string()
        .contains("extended"));
    let theirs = oracle.ckks().expect("the oracle declares CKKS").upload(&x.a).unwrap();
    assert!(err(gpu.add(&a, &theirs, m.clone())).contains("belongs to backend cpu"));
}
