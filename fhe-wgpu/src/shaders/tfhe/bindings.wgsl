// What the bit scheme's kernels share (prepended to tfhe/bootstrap.wgsl and
// tfhe/keyswitch.wgsl, which are compiled as two modules with one bind group layout):
// the bindings and the dispatch range. One workgroup per ciphertext. The bootstrap key
// and the key-switching key may exceed one storage binding, so each is bound in chunks
// starting at coefficient `base`; a dispatch covers the LWE coefficients [`lo`, `hi`)
// (blind rotation) or the ring coefficients [`lo`, `hi`) (key switch) of its chunk, and
// the accumulator stays in `work` / `lwe_out` between dispatches. The host keeps each range short enough that
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
