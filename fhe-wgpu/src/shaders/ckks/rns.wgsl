// What every CKKS kernel shares: the bindings, the run-time arguments, and exact
// arithmetic modulo a prime read from the table at run time (nothing about a prime is
// compiled in; primes up to 62 bits, the bound of fhe_api::ring::NttTables).
//
// `tables` holds one record per prime of QP (q_0..q_L, then P), TABLE_STRIDE words
// each: [q, q^-1 mod 2^64, 2^128 mod q, N^-1, shoup(N^-1), 0, 0, 0], then the
// forward twiddles psi^bitrev(k) [N], the inverse ones [N], and their Shoup companions
// floor(w 2^64 / q) in the same order [2N]. Limb l of an operand uses record
// `prime(l)`: `first + l` below `split`, `hi + l - split` from there (an extended
// polynomial q_0..q_l, P reads P's records after q_L's). Every helper returns a fully
// reduced residue, so words are the oracle's whatever computes them.

struct Args {
    op: u32,
    parts: u32,
    limbs: u32,
    log_n: u32,
    first: u32,
    split: u32,
    hi: u32,
    out_off: u32,
    out_stride: u32,
    x_off: u32,
    x_stride: u32,
    y_off: u32,
    y_stride: u32,
    y_split: u32,
    yhi_off: u32,
    z_off: u32,
    z_stride: u32,
    a_off: u32,
    b_off: u32,
    gather: u32,
    aux0: u32,
    aux1: u32,
    aux2: u32,
    aux3: u32,
    w0: u32,
    w1: u32,
    w2: u32,
    w3: u32,
}

@group(0) @binding(0) var<storage, read> tables: array<u64>;
@group(0) @binding(1) var<storage, read_write> out: array<u64>;
@group(0) @binding(2) var<storage, read> xs: array<u64>;
@group(0) @binding(3) var<storage, read> ys: array<u64>;
@group(0) @binding(4) var<storage, read> yhi: array<u64>;
@group(0) @binding(5) var<storage, read> zs: array<u64>;
@group(0) @binding(6) var<storage, read> index: array<u32>;
@group(0) @binding(7) var<storage, read> sc: array<u64>;
@group(0) @binding(8) var<uniform> args: Args;

const WG: u32 = 256u;

fn n_words() -> u32 {
    return 1u << args.log_n;
}

fn table_stride() -> u32 {
    return 8u + 4u * n_words();
}

fn prime(l: u32) -> u32 {
    return select(args.hi + l - args.split, args.first + l, l < args.split);
}

fn record(l: u32) -> u32 {
    return prime(l) * table_stride();
}

// `mulhi(a, b)`, the high word of the 128-bit product, comes from `mulhi64.wgsl`,
// prepended to the module.

fn add_q(a: u64, b: u64, q: u64) -> u64 {
    let s = a + b;
    return select(s, s - q, s >= q);
}

fn sub_q(a: u64, b: u64, q: u64) -> u64 {
    return select(a - b, a + q - b, a < b);
}

// Montgomery REDC with R = 2^64 of a b: (a b - m q) / R for m = lo(a b) q^-1, which
// lies in (-q, q) whenever a b < q R (so for a < 2^64, b < q), one conditional add.
fn redc(a: u64, b: u64, q: u64, qinv: u64) -> u64 {
    let lo = a * b;
    let hi = mulhi(a, b);
    let u = mulhi(lo * qinv, q);
    return select(hi - u, hi - u + q, hi < u);
}

// a b mod q for a, b < q, record `r`: REDC(REDC(a, b), R^2) = a b R^-1 R^2 R^-1.
fn mul_at(a: u64, b: u64, r: u32) -> u64 {
    let q = tables[r];
    let qinv = tables[r + 1u];
    return redc(redc(a, b, q, qinv), tables[r + 2u], q, qinv);
}

// x mod q for any x < 2^64: REDC(REDC(x, R^2), 1) = x R R^-1 (x R^2 < q R holds).
fn reduce_at(x: u64, r: u32) -> u64 {
    let q = tables[r];
    let qinv = tables[r + 1u];
    return redc(redc(x, tables[r + 2u], q, qinv), 1lu, q, qinv);
}

// x w mod q by Shoup's method (ws = floor(w 2^64 / q)): x w - floor(x ws / 2^64) q lies
// in [0, 2q), and 2q < 2^64 for q < 2^63.
fn mul_shoup(x: u64, w: u64, ws: u64, q: u64) -> u64 {
    let r = x * w - mulhi(x, ws) * q;
    return select(r, r - q, r >= q);
}

// The centered remainder of x < q_src (h = floor(q_src / 2), r = (x + h) mod q_src,
// d = r - h) modulo record `r`'s prime: ((r mod q) - (h mod q)) mod q, as
// fhe_api::ring::rns::centered_remainder_to pins it.
fn centered_at(x: u64, q_src: u64, r: u32) -> u64 {
    let h = q_src / 2lu;
    let s = x + h;
    let t = select(s, s - q_src, s >= q_src);
    return sub_q(reduce_at(t, r), reduce_at(h, r), tables[r]);
}

// The number of workgroups times WG invocations, for grid-stride loops.
fn stride_of(groups: vec3<u32>) -> u32 {
    return groups.x * WG;
}
