// RNS helpers every CKKS kernel shares. CKKS programs use 64-bit words (`lux_w` is u64,
// primes up to 61 bits) and read each limb's prime from a table entry (LuxNttTable,
// whose first field is the LuxModulus), so one module serves every chain: nothing about
// a prime is compiled in. The batched NTT over such a table is `lux_ring_ntt`
// (ring_ntt.cu, in the same module): transform t over limb t % limbs.
//
// Every helper returns a fully reduced residue, so results are the exact integers the
// oracle defines (docs/CKKS.md, "Evaluation"), whatever reduction computes them.

#if LUX_WORD_BITS != 64
#error "the CKKS kernels take 64-bit residue words"
#endif

// x mod q for any 64-bit x. With k = bitlen(q) >= 32, x < 2^64 <= 2^(2k), the range of
// lux_mul's Barrett estimate; smaller test primes take the (slow, exact) division.
LUX_DEVICE u64 lux_reduce(u64 x, const LuxModulus& m) {
    if (m.bits >= 32) return lux_mul(x, 1, m);
    return x % m.q;
}

// The centered remainder of x < q_src (h = floor(q_src / 2), r = (x + h) mod q_src,
// d = r - h), reduced mod m: ((r mod q) - (h mod q)) mod q, as
// fhe_api::ring::rns::centered_remainder_to pins it. x + h < 2 q_src < 2^63.
LUX_DEVICE u64 lux_centered(u64 x, u64 q_src, const LuxModulus& m) {
    const u64 h = q_src / 2;
    const u64 r = lux_csub(x + h, q_src);
    return lux_sub(lux_reduce(r, m), lux_reduce(h, m), m.q);
}

// The word's limb and slot in a [part][limb][N] layout of N = 2^log_n words per limb.
LUX_DEVICE u32 lux_limb_of(u64 w, u32 log_n, u32 limbs) { return (u32)(w >> log_n) % limbs; }

// A grid-stride loop over `total` words: every kernel below is correct for any grid and
// block (the emulator runs tiny ones on purpose).
#define LUX_FOR_WORDS(w, total) \
    for (u64 w = (u64)blockIdx.x * blockDim.x + threadIdx.x; w < (total); w += (u64)gridDim.x * blockDim.x)
