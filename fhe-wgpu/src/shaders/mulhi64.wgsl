// The high word of the 128-bit product a b (WGSL has no mulhi; needs SHADER_INT64):
// from 32-bit halves, every partial sum below 2^64. Prepended to the 54-bit ring's
// Montgomery module (`mont64.wgsl`) and to the CKKS module (`ckks/rns.wgsl`).

fn mulhi(a: u64, b: u64) -> u64 {
    let m = 0xfffffffflu;
    let a0 = a & m;
    let a1 = a >> 32u;
    let b0 = b & m;
    let b1 = b >> 32u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 32u) + (p01 & m) + (p10 & m);
    return p11 + (p01 >> 32u) + (p10 >> 32u) + (mid >> 32u);
}
