// Negacyclic NTT of `count` polynomials held in shared memory at `a` (count * N words),
// by the whole block: Cooley-Tukey forward (natural -> bit-reversed order), Gentleman-
// Sande inverse with 1/N, the order fhe_api::ops::NttOps defines. Callers synchronize
// before (the data is in place) and this returns synchronized.

// Butterfly `t` of a stage whose blocks are `half` wide, over consecutive polynomials:
// the index of its first input, and in `i` its block (the twiddle's offset in the stage).
LUX_DEVICE int lux_butterfly(int t, int half, int* i) {
    int p = t / (LUX_N / 2);
    int k = t % (LUX_N / 2);
    *i = k / half;
    return p * LUX_N + 2 * (*i) * half + (k % half);
}

LUX_DEVICE void lux_ntt_forward_smem(lux_w* a, int count, const lux_w* psi, const lux_w* psi_s) {
    for (int m = 1, half = LUX_N / 2; m < LUX_N; m <<= 1, half >>= 1) {
        for (int t = threadIdx.x; t < count * (LUX_N / 2); t += blockDim.x) {
            int i;
            int base = lux_butterfly(t, half, &i);
            lux_w u = a[base];
            lux_w v = lux_mul_shoup(a[base + half], psi[m + i], psi_s[m + i]);
            a[base] = lux_add(u, v);
            a[base + half] = lux_sub(u, v);
        }
        __syncthreads();
    }
}

LUX_DEVICE void lux_ntt_inverse_smem(lux_w* a, int count, const lux_w* ipsi, const lux_w* ipsi_s) {
    for (int m = LUX_N, half = 1; m > 1; m >>= 1, half <<= 1) {
        int h = m >> 1;
        for (int t = threadIdx.x; t < count * (LUX_N / 2); t += blockDim.x) {
            int i;
            int base = lux_butterfly(t, half, &i);
            lux_w u = a[base];
            lux_w v = a[base + half];
            a[base] = lux_add(u, v);
            a[base + half] = lux_mul_shoup(lux_sub(u, v), ipsi[h + i], ipsi_s[h + i]);
        }
        __syncthreads();
    }
    for (int t = threadIdx.x; t < count * LUX_N; t += blockDim.x) {
        a[t] = lux_mul_shoup(a[t], (lux_w)LUX_N_INV, (lux_w)LUX_N_INV_SHOUP);
    }
    __syncthreads();
}

// Batched NTT: one block per polynomial, in place (LuxNttArgs). Dynamic shared memory:
// N words.
LUX_KERNEL(lux_ntt)(LuxNttArgs args) {
    LUX_DYNAMIC_SHARED(lux_w, smem);
    if (blockIdx.x >= args.count) return;
    lux_w* data = args.data + (u64)blockIdx.x * LUX_N;
    for (int t = threadIdx.x; t < LUX_N; t += blockDim.x) smem[t] = data[t];
    __syncthreads();
    if (args.inverse == 0) {
        lux_ntt_forward_smem(smem, 1, args.twiddles, args.twiddles_shoup);
    } else {
        lux_ntt_inverse_smem(smem, 1, args.twiddles, args.twiddles_shoup);
    }
    for (int t = threadIdx.x; t < LUX_N; t += blockDim.x) data[t] = smem[t];
}
