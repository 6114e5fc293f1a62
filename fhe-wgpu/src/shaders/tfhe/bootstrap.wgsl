// Blind rotation (GINX, ternary secrets) and sample extraction, one workgroup per
// ciphertext over the LWE coefficients [range.lo, range.hi) of the bound key chunk
// (bindings.wgsl). The byte contract is fhe-cpu's tfhe/bootstrap.

// Words of one RGSW key: ROWS rows x 2 halves x N slots.
const KEY_LEN: u32 = ROWS * 2u * N;

// The mod-switched a_i, broadcast. Two slots: when a step is skipped (a_i == 0) the
// next write comes right after the load's barrier, so it must go to the other slot
// while slow invocations still read this one.
var<workgroup> wg_a: array<u32, 2>;

// Mod switch q -> 2N (both powers of two): round half up.
fn ms_to_2n(x: u32) -> u32 {
    let shift = LOGQ - LOG_2N;
    return ((x + (1u << (shift - 1u))) >> shift) & (TWO_N - 1u);
}

// NTT(X^k) - 1 at slot c, in Montgomery form.
fn monomial_minus_one(k: u32, c: u32) -> u64 {
    let e = u32(tw[4u * N + c]);
    return sub_mod(tw[2u * N + ((k * e) & (TWO_N - 1u))], ONE_R);
}

@compute @workgroup_size(WG)
fn blind_rotate(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let ct = wid.x;
    if ct >= arrayLength(&lwe_in) / (LWE_N + 1u) {
        return;
    }
    let base = ct * WORK_ROWS * N;
    let digits = base + 2u * N;
    let input = ct * (LWE_N + 1u);
    if range.lo == 0u {
        // ACC = (0, X^-b TV), TV the look-up table (round(Q/8) in every coefficient
        // for a gate): coefficient c moves to c + k, negated once it wraps past N.
        var k = (TWO_N - ms_to_2n(lwe_in[input + LWE_N])) % TWO_N;
        let negate_all = k >= N;
        if negate_all {
            k = k - N;
        }
        for (var c = tid; c < N; c += WG) {
            work[base + c] = 0lu;
            var j = c + k;
            var neg = negate_all;
            if j >= N {
                j = j - N;
                neg = !negate_all;
            }
            let tv = lut[c];
            work[base + N + j] = select(tv, Q - tv, neg && tv != 0lu);
        }
        storageBarrier();
    }
    for (var i = range.lo; i < range.hi; i++) {
        if tid == 0u {
            wg_a[i & 1u] = ms_to_2n(lwe_in[input + i]);
        }
        let a = workgroupUniformLoad(&wg_a[i & 1u]);
        if a == 0u {
            continue; // X^0 - 1 = 0: the step is the identity.
        }
        // Signed gadget digits of both halves (the byte contract of fhe-cpu's
        // `Ring::decompose`): centered representative, L-1 digits in [-Bg/2, Bg/2),
        // the top digit takes the carry; digit l of half h goes to row h L + l.
        for (var c = tid; c < N; c += WG) {
            for (var h = 0u; h < 2u; h++) {
                let x = work[base + h * N + c];
                var v = i64(x);
                if x > HALF_Q {
                    v = v - Q_I;
                }
                for (var l = 0u; l < L - 1u; l++) {
                    var d = v & (BG - 1li);
                    if d >= BG / 2li {
                        d = d - BG;
                    }
                    v = (v - d) >> LOG_BG;
                    work[digits + (h * L + l) * N + c] = u64(select(d, d + Q_I, d < 0li));
                }
                work[digits + (h * L + L - 1u) * N + c] = u64(select(v, v + Q_I, v < 0li));
            }
        }
        storageBarrier();
        ntt_forward_polys(digits, ROWS, tid);
        // Both external products and their monomials, slot by slot, in evaluation form.
        let kp = (2u * (i - range.base)) * KEY_LEN;
        let km = kp + KEY_LEN;
        for (var c = tid; c < N; c += WG) {
            let mp = monomial_minus_one(a, c);
            let mm = monomial_minus_one(TWO_N - a, c);
            var upd: array<u64, 2>;
            for (var h = 0u; h < 2u; h++) {
                var ep = 0lu;
                var em = 0lu;
                for (var r = 0u; r < ROWS; r++) {
                    let d = work[digits + r * N + c];
                    let off = (2u * r + h) * N + c;
                    ep = mont_acc(ep, d, bsk[kp + off]);
                    em = mont_acc(em, d, bsk[km + off]);
                }
                upd[h] = add_mod(mont_mul(mont_fin(ep), mp), mont_mul(mont_fin(em), mm));
            }
            work[digits + c] = upd[0];
            work[digits + N + c] = upd[1];
        }
        storageBarrier();
        ntt_inverse_polys_unscaled(digits, 2u, tid);
        for (var c = tid; c < 2u * N; c += WG) {
            work[base + c] = add_mod(work[base + c], mont_mul(work[digits + c], NINV_R));
        }
        storageBarrier();
    }
    if range.hi == LWE_N {
        // Sample extraction of coefficient 0: a'_0 = a_0, a'_j = -a_(N-j), b' = b_0.
        let out = ct * (N + 1u);
        for (var c = tid; c < N; c += WG) {
            if c == 0u {
                ext[out] = work[base];
                ext[out + N] = work[base + N];
            } else {
                let x = work[base + N - c];
                ext[out + c] = select(Q - x, 0lu, x == 0lu);
            }
        }
    }
}
