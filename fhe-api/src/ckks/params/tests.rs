use super::*;
use crate::ring::prime::is_ntt_prime;

#[test]
fn bounds_follow_the_tables() {
    let ternary: Vec<_> = (10..=17).map(|l| security_bound_bits(l, SecretDist::Ternary).unwrap()).collect();
    assert_eq!(ternary, [27, 54, 109, 218, 438, 881, 1772, 3576]);
    let sparse = SecretDist::SparseTernary { hamming_weight: 192 };
    assert_eq!([15, 16, 17].map(|l| security_bound_bits(l, sparse)), [Some(767), Some(1553), Some(3104)]);
    assert_eq!(security_bound_bits(14, sparse), None);
    assert_eq!(security_bound_bits(16, SecretDist::SparseTernary { hamming_weight: 64 }), None);
    assert_eq!(security_bound_bits(18, SecretDist::Ternary), None);
}

#[test]
fn every_preset_is_secure_with_distinct_ntt_primes() {
    for preset in Preset::ALL {
        let p = preset.params();
        p.check_security().unwrap();
        assert!(p.log_qp() <= p.security_bound().unwrap(), "{preset}");
        let all: Vec<u64> = p.q.iter().chain(&p.p).map(|m| m.0).collect();
        for (i, &q) in all.iter().enumerate() {
            assert!(is_ntt_prime(q, p.ring_degree) && q < 1 << MAX_PRIME_BITS, "{preset}: {q}");
            assert!(!all[..i].contains(&q), "{preset}: {q} repeated");
        }
        // Scale primes within 2^-8 of the scale; P above every digit.
        for m in &p.q[1..] {
            assert!(m.0.abs_diff(1 << p.scale_bits) < 1 << (p.scale_bits - 8), "{preset}");
        }
        let pp = mp_product(&p.p.iter().map(|m| m.0).collect::<Vec<_>>());
        for r in p.digits(p.max_level()) {
            let d = mp_product(&p.q[r].iter().map(|m| m.0).collect::<Vec<_>>());
            assert_eq!(mp_cmp(&pp, &d), Ordering::Greater, "{preset}");
        }
        // The name says what the chain holds.
        assert_eq!(preset.name(), format!("slots{}-scale{}-depth{}", p.slots(), p.scale_bits, p.depth()));
        assert_eq!(p.name, preset.name());
    }
}

#[test]
fn each_preset_has_the_smallest_dnum_that_fits() {
    for preset in Preset::ALL {
        let s = preset.literal();
        assert_eq!(preset.params().dnum, s.dnum, "{preset}");
        if s.dnum > 1 {
            let e = Params::new(&ParamsLiteral { dnum: s.dnum - 1, ..s.clone() }).unwrap_err();
            assert!(matches!(e, Error::SecurityBound { .. }), "{preset}: {e}");
        }
    }
}

/// The chains are part of the format: these pins are the cross-platform contract.
#[test]
fn generation_is_deterministic_and_pinned() {
    let pins: [(Preset, [u64; 2], u32, usize); 5] = [
        (Preset::Slots4096Scale40Depth2, [36028797018652673, 1099511480321], 196, 1),
        (Preset::Slots8192Scale40Depth6, [1152921504606748673, 1099510054913], 420, 2),
        (Preset::Slots16384Scale40Depth14, [1152921504606584833, 1099510054913], 860, 4),
        (Preset::Slots32768Scale40Depth34, [1152921504606584833, 1099563663361], 1721, 5),
        (Preset::Slots32768Scale59Depth22, [1152921504606584833, 576460752300015617], 1719, 6),
    ];
    for (preset, first_two, log_qp, k) in pins {
        let p = preset.params();
        assert_eq!([p.q[0].0, p.q[1].0], first_two, "{preset}");
        assert_eq!((p.log_qp(), p.p.len()), (log_qp, k), "{preset}");
        let again = Params::new(&preset.literal()).unwrap();
        assert_eq!(&again, p);
    }
}

#[test]
fn over_the_bound_is_refused_naming_both_numbers() {
    // N = 2^13 with 60-bit primes at depth 4: about 280 + 120 bits against 218.
    let e = Params::new(&lit("too-deep", 13, 40, 4, 60, 60, 5)).unwrap_err();
    let Error::SecurityBound { log_qp, bound, n, secret } = e else { panic!("{e}") };
    assert!(log_qp > 218 && bound == 218 && n == 8192 && secret == "ternary");
    let msg = Error::SecurityBound { log_qp, bound, n, secret }.to_string();
    assert!(msg.contains(&log_qp.to_string()) && msg.contains("218"), "{msg}");
    // A hand-built chain is checked the same way.
    let mut p = Preset::Slots4096Scale40Depth2.params().clone();
    p.q.extend(primes_below(60, p.ring_degree, 2, &[]).unwrap().into_iter().map(RingModulus));
    let msg = p.check_security().unwrap_err().to_string();
    assert!(msg.contains(&p.log_qp().to_string()) && msg.contains("218"), "{msg}");
    // A sparse secret where no table covers it.
    p.secret = SecretDist::SparseTernary { hamming_weight: 192 };
    assert!(matches!(p.check_security(), Err(Error::InvalidInput(_))));
}

#[test]
fn bad_arguments_are_errors() {
    for (log_n, scale, depth, first, special, dnum) in [
        (11, 40, 2, 55, 60, 3),
        (18, 40, 2, 55, 60, 3),
        (13, 40, 2, 61, 60, 3),
        (13, 40, 2, 55, 61, 3),
        (13, 19, 2, 55, 60, 3),
        (13, 56, 2, 55, 60, 3),
        (13, 40, 2, 55, 60, 0),
        (13, 40, 2, 55, 60, 4),
    ] {
        let r = Params::new(&lit("bad", log_n, scale, depth, first, special, dnum));
        assert!(matches!(r, Err(Error::InvalidInput(_))), "{log_n} {scale} {depth} {first} {special} {dnum}");
    }
}

#[test]
fn digits_partition_each_level() {
    let p = Preset::Slots32768Scale40Depth34.params();
    assert_eq!(p.alpha(), 6);
    assert_eq!(p.digits(34), [0..6, 6..12, 12..18, 18..24, 24..30, 30..35]);
    assert_eq!(p.digits(7), [0..6, 6..8]);
    assert_eq!(p.digits(0).first(), Some(&(0..1)));
    assert_eq!(p.digits(0).len(), 1);
    // A dnum leaving a digit empty is lowered: 10 primes, dnum 6 -> alpha 2, 5 digits.
    let q = Params::new(&lit("d", 15, 40, 9, 60, 60, 6)).unwrap();
    assert_eq!((q.alpha(), q.dnum), (2, 5));
}

#[test]
fn names_round_trip() {
    for preset in Preset::ALL {
        assert_eq!(Preset::from_id(preset.id()), Some(preset));
        assert_eq!(preset.name().parse::<Preset>().unwrap(), preset);
        assert_eq!(preset.to_string(), preset.name());
    }
    assert_eq!(Preset::from_id(100), None);
    let e = "slots32768-scale40-depth35".parse::<Preset>().unwrap_err().to_string();
    assert!(Preset::ALL.iter().all(|p| e.contains(p.name())), "{e}");
}

#[test]
fn multiprecision_helpers() {
    assert_eq!(mp_product(&[]), [1]);
    assert_eq!(mp_product(&[u64::MAX, u64::MAX]), [1, u64::MAX - 1]);
    assert_eq!(mp_bits(&[0, 1]), 65);
    assert_eq!(mp_bits(&[0]), 0);
    assert_eq!(mp_cmp(&[5, 0], &[5]), Ordering::Equal);
    assert_eq!(mp_cmp(&[0, 1], &[u64::MAX]), Ordering::Greater);
    assert_eq!(crate::ckks::scale::pow2(40), (1u64 << 40) as f64);
    assert_eq!(crate::ckks::scale::pow2(-3), 0.125);
}

/// Prints the preset tables of `docs/CKKS.md`:
/// `cargo test -p fhe-api --lib ckks::params -- --ignored --nocapture preset_table`.
#[test]
#[ignore]
fn preset_table() {
    let rel = |x: u64, bits: u32| {
        let c = 1i128 << bits;
        let d = x as i128 - c;
        format!("2^{bits} {} {}", if d < 0 { '-' } else { '+' }, d.abs())
    };
    println!("| preset | id | N | slots | scale | depth | first prime q0 | scale primes q1.. | special primes P |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for preset in Preset::ALL {
        let p = preset.params();
        let scale: Vec<u64> = p.q[1..].iter().map(|m| m.0).collect();
        let (lo, hi) = (*scale.iter().min().unwrap(), *scale.iter().max().unwrap());
        let special: Vec<String> = p.p.iter().map(|m| rel(m.0, mp_bits(&[m.0]))).collect();
        println!(
            "| `{preset}` | {} | 2^{} | {} | 2^{} | {} | {} | {} primes in [{}, {}] | {} |",
            preset.id(),
            p.log_n(),
            p.slots(),
            p.scale_bits,
            p.depth(),
            rel(p.q[0].0, mp_bits(&[p.q[0].0])),
            scale.len(),
            rel(lo, p.scale_bits),
            rel(hi, p.scale_bits),
            special.join(", ")
        );
    }
    println!();
    println!("| preset | dnum | alpha | K (special primes) | log Q | log QP | bound (ternary) | margin |");
    println!("|---|---|---|---|---|---|---|---|");
    for preset in Preset::ALL {
        let p = preset.params();
        let bound = p.security_bound().unwrap();
        println!(
            "| `{preset}` | {} | {} | {} | {} | {} | {bound} | {} |",
            p.dnum,
            p.alpha(),
            p.p.len(),
            p.log_q(),
            p.log_qp(),
            bound - p.log_qp()
        );
    }
    println!();
    println!("| preset | alternative | K | log QP | bound |");
    println!("|---|---|---|---|---|");
    for preset in Preset::ALL {
        let s = preset.literal();
        let mut alternatives = vec![("dnum - 1", ParamsLiteral { dnum: s.dnum - 1, ..s.clone() })];
        if s.first_bits < 60 {
            alternatives.push(("60-bit first prime", ParamsLiteral { first_bits: 60, ..s.clone() }));
        }
        for (what, alt) in alternatives {
            let p = Params::build_chain(&alt).unwrap();
            let bound = p.security_bound().unwrap();
            println!("| `{preset}` | {what} (dnum {}) | {} | {} | {bound} |", p.dnum, p.p.len(), p.log_qp());
        }
    }
    for preset in Preset::ALL {
        let p = preset.params();
        println!("\n{preset}:\n  q = {:?}", p.q.iter().map(|m| m.0).collect::<Vec<_>>());
        println!("  p = {:?}", p.p.iter().map(|m| m.0).collect::<Vec<_>>());
    }
}

/// A ternary literal from the numbers the tests vary.
fn lit(
    name: &str,
    log_n: u32,
    scale_bits: u32,
    depth: usize,
    first_bits: u32,
    special_bits: u32,
    dnum: usize,
) -> ParamsLiteral {
    ParamsLiteral {
        name: name.into(),
        log_n,
        scale_bits,
        depth,
        first_bits,
        special_bits,
        dnum,
        secret: SecretDist::Ternary,
    }
}

#[test]
fn insecure_parameters_are_named_so_and_only_they_skip_the_check() {
    let l = lit("boot-ci", 12, 50, 12, 60, 60, 3);
    assert!(matches!(Params::new(&l), Err(Error::SecurityBound { .. })));
    let p = Params::insecure_for_tests(&l).unwrap();
    assert!(p.is_insecure() && p.name() == "insecure-boot-ci");
    p.check_security().unwrap();
    assert!(!Preset::Slots4096Scale40Depth2.params().is_insecure());
    // The chain itself is validated as for secure parameters.
    assert!(Params::insecure_for_tests(&lit("bad", 12, 50, 12, 61, 60, 3)).is_err());
}

/// The automatic mode's scale table stays within a bit of the scale at every level of
/// every preset and of a deep small-scale chain (a deviation doubles per level unless the
/// primes track it: the 34-level preset once fell to 2^-28 at level 12).
#[test]
fn every_level_scale_stays_near_the_scale() {
    let deep = ParamsLiteral {
        name: "deep-29".into(),
        log_n: 13,
        scale_bits: 29,
        depth: 30,
        first_bits: 30,
        special_bits: 60,
        dnum: 3,
        secret: SecretDist::Ternary,
    };
    let deep = Params::insecure_for_tests(&deep).unwrap();
    for p in Preset::ALL.iter().map(|p| p.params()).chain([&deep]) {
        for l in 0..=p.max_level() {
            let drift = (p.scale_at(l).value().log2() - p.scale_bits() as f64).abs();
            assert!(drift <= 1.0, "{}: level {l} at 2^{:.2}", p.name(), p.scale_at(l).value().log2());
        }
    }
}
