// Blind rotation (GINX, ternary secrets), sample extraction and key switching, one
// workgroup per ciphertext. The bootstrap key and the key-switching key may exceed one
// storage binding, so each is bound in chunks starting at coefficient `base`; a
// dispatch covers the LWE coefficients [`lo`, `hi`) (blind rotation) or the ring
// coefficients [`lo`, `hi`) (key switch) of its chunk, and the accumulator stays in
// `work` / `lwe_out` between dispatches. The host keeps each range short enough that
// no invocation runs more than about 2^15 loop iterations in one dispatch: llvmpipe
// (lavapipe) silently leaves a loop nest after 65535 iterations.
//
// Per ciphertext `work` holds 2 + ROWS polynomials: the accumulator (a, b), then the
// 2L gadget digits, whose first two rows are reused for the update.

struct Range {
    lo: u32,
    hi: u32,
    // Key switch only: the constant added to b after the last range (q/8 for a bootstrap).
    add: u32,
    // The first coefficient of the bound key chunk.
    base: u32,
}

@group(0) @binding(0) var<storage, read> tw: array<u64>;
@group(0) @binding(1) var<storage, read> bsk: array<u64>;
@group(0) @binding(2) var<storage, read> ksk: array<u32>;
@group(0) @binding(3) var<storage, read> lwe_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> work: array<u64>;
@group(0) @binding(5) var<storage, read_write> ext: array<u64>;
@group(0) @binding(6) var<storage, read_write> lwe_out: array<u32>;
@group(0) @binding(7) var<uniform> range: Range;
// The look-up table: the test polynomial's N coefficients (plain residues).
@group(0) @binding(8) var<storage, read> lut: array<u64>;

const WORK_ROWS: u32 = 2u + ROWS;
// Words of one RGSW key: ROWS rows x 2 halves x N slots.
const KEY_LEN: u32 = ROWS * 2u * N;
const NO_SAMPLE: u32 = 0xffffffffu;

// The mod-switched a_i, broadcast. Two slots: when a step is skipped (a_i == 0) the
// next write comes right after the load's barrier, so it must go to the other slot
// while slow invocations still read this one.
var<workgroup> wg_a: array<u32, 2>;

// Mod switch q -> 2N (both powers of two): round half up.
fn ms_to_2n(x: u32) -> u32 {
    let shift = LOGQ - LOG_2N;
    return ((x + (1u << (shift - 1u))) >> shift) & (TWO_N - 1u);
}

// round(x q / Q) mod q by long division, one bit of q at a time: after step i,
// x 2^i = r Q + rem with rem < Q, so no intermediate exceeds 2Q < 2^64.
fn ms_to_q(x: u64) -> u32 {
    var rem = x;
    var r = 0u;
    for (var i = 0u; i < LOGQ; i++) {
        rem = rem << 1u;
        r = r << 1u;
        if rem >= Q {
            rem = rem - Q;
            r = r + 1u;
        }
    }
    // + floor(Q/2) before the division: one more unit when rem + floor(Q/2) >= Q.
    if rem >= Q - HALF_Q {
        r = r + 1u;
    }
    return r & LWE_MASK;
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

// One 16-bit key-switching word; two are packed per u32, low half first.
fn ksk_word(e: u32) -> u32 {
    return (ksk[e >> 1u] >> ((e & 1u) * 16u)) & 0xffffu;
}

// Key switch of ring coefficients [lo, hi): unsigned base-B digits of ms_to_q(a_j),
// most significant first; the sample of digit value v != 0 is (j levels + l)(B-1) + v-1,
// with j relative to the bound chunk of the key. Sums wrap mod 2^32, which agrees
// with the oracle's u16 arithmetic after the final mask to 2^15.
@compute @workgroup_size(WG)
fn key_switch(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let ct = wid.x;
    if ct >= arrayLength(&ext) / (N + 1u) {
        return;
    }
    let base = ct * WORK_ROWS * N;
    let input = ct * (N + 1u);
    let out = ct * (LWE_N + 1u);
    let count = (range.hi - range.lo) * KS_LEVELS;
    for (var t = tid; t < count; t += WG) {
        let j = range.lo + t / KS_LEVELS;
        let l = t % KS_LEVELS;
        let a = ms_to_q(ext[input + j]);
        let v = (a >> (LOGQ - KS_LOG_B * (l + 1u))) & (KS_B - 1u);
        let s = ((j - range.base) * KS_LEVELS + l) * (KS_B - 1u) + v - 1u;
        work[base + t] = u64(select(NO_SAMPLE, s, v != 0u));
    }
    storageBarrier();
    for (var k = tid; k <= LWE_N; k += WG) {
        var acc = 0u;
        if range.lo == 0u {
            if k == LWE_N {
                acc = ms_to_q(ext[input + N]);
            }
        } else {
            acc = lwe_out[out + k];
        }
        for (var t = 0u; t < count; t++) {
            let s = u32(work[base + t]);
            if s != NO_SAMPLE {
                acc = acc - ksk_word(s * (LWE_N + 1u) + k);
            }
        }
        if range.hi == N {
            acc = (acc + select(0u, range.add, k == LWE_N)) & LWE_MASK;
        }
        lwe_out[out + k] = acc;
    }
}
