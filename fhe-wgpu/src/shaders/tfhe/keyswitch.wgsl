// Key switching (after the mod switch Q -> q), one workgroup per extracted sample over
// the ring coefficients [range.lo, range.hi) of the bound key chunk (bindings.wgsl). The
// byte contract is fhe-cpu's tfhe/keyswitch.rs.

const NO_SAMPLE: u32 = 0xffffffffu;

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
