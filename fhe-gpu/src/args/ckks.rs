//! The CKKS kernels' argument structs (`kernels/ckks/`), mirrored in `kernels/args.h`.
//! Every CKKS program has 64-bit residue words; `tables` point at one [`GpuNttTable`]
//! entry per limb (its modulus is what the element-wise kernels read).

use super::{CStruct, CType, DevPtr, Field, FieldType, GpuNttTable, KernelArgs, Residue};
use crate::driver::Word;

/// The element-wise operations of `lux_ckks_eltwise` (`kernels/ckks/eltwise.cu` names
/// the same numbers). `a`, `b` are per-limb scalars; `z[perm]` the gather by `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum EltwiseOp {
    /// `out = x`
    Copy = 0,
    /// `out = x + y`
    Add = 1,
    /// `out = x - y`
    Sub = 2,
    /// `out = -x`
    Neg = 3,
    /// `out = x y`
    Mul = 4,
    /// `out += x y`
    MulAdd = 5,
    /// `out += x`
    AddTo = 6,
    /// `out -= x`
    SubFrom = 7,
    /// `out = x a`
    Scale = 8,
    /// `out = a + b y`
    Affine = 9,
    /// `out = (x - y) a`
    SubScale = 10,
    /// `out += (x - y) a`
    SubScaleAdd = 11,
    /// `out = z[perm] + (x - y) a`
    SubScalePerm = 12,
    /// `out += z[perm] a`
    PermScaleAdd = 13,
    /// `out = 0`
    Zero = 14,
    /// `out = a`
    Fill = 15,
    /// Over one part's words: `(out0, out1, out2) = (x0 y0, x0 y1 + x1 y0, x1 y1)`, the
    /// parts of `out`, `x`, `y` their strides apart (the tensor product in one launch).
    Tensor = 16,
}

kernel_args! {
    /// `lux_ckks_eltwise`: one element-wise operation over `parts` parts of `limbs` limbs.
    pub struct CkksEltwiseArgs => "lux_ckks_eltwise", "LuxCkksEltwiseArgs" {
        pub out: DevPtr<Residue>,
        pub x: DevPtr<Residue>,
        /// Limbs below `y_split` of each part; null when the operation reads no `y`.
        pub y: DevPtr<Residue>,
        /// Limbs from `y_split` on (an extended plaintext's `P` limbs).
        pub y_hi: DevPtr<Residue>,
        /// The gathered operand of the permuting operations.
        pub z: DevPtr<Residue>,
        /// `index[s]`: the source slot of slot `s` (`fhe_api::ring::automorphism::EvalPermutation`).
        pub index: DevPtr<u32>,
        pub a: DevPtr<u64>,
        pub b: DevPtr<u64>,
        pub tables: DevPtr<GpuNttTable>,
        /// Words between parts of `out` and `x`.
        pub out_stride: u64,
        pub x_stride: u64,
        /// Words between parts of `y` (0: one polynomial for every part).
        pub y_stride: u64,
        pub z_stride: u64,
        pub parts: u32,
        pub limbs: u32,
        pub log_n: u32,
        pub y_split: u32,
        /// An [`EltwiseOp`].
        pub op: u32,
        /// Zero; spells out the tail padding.
        pub reserved: u32,
    }
}

kernel_args! {
    /// `lux_ckks_center`: a coefficient-form limb's centered remainder mod each of
    /// `limbs` primes, for `parts` parts (rescale and ModRaise).
    pub struct CkksCenterArgs => "lux_ckks_center", "LuxCkksCenterArgs" {
        /// `[part][limb][N]`.
        pub out: DevPtr<Residue>,
        /// `[part][N]`, below the source prime.
        pub input: DevPtr<Residue>,
        /// The source limb's entry.
        pub source: DevPtr<GpuNttTable>,
        pub tables: DevPtr<GpuNttTable>,
        pub parts: u32,
        pub limbs: u32,
        pub log_n: u32,
        pub reserved: u32,
    }
}

kernel_args! {
    /// `lux_ckks_mod_up`: every digit's extension over `q_0..q_l, P` in coefficient form,
    /// one launch.
    pub struct CkksModUpArgs => "lux_ckks_mod_up", "LuxCkksModUpArgs" {
        /// `[digit][limb][N]`, `limbs` limbs per digit.
        pub out: DevPtr<Residue>,
        /// The polynomial's `l + 1` limbs in coefficient form.
        pub input: DevPtr<Residue>,
        /// The extended limbs' entries.
        pub tables: DevPtr<GpuNttTable>,
        /// `(Q_D / q_i)^-1 mod q_i` of limb `i`'s digit `D`, one per limb of `q_0..q_l`.
        pub q_hat_inv: DevPtr<u64>,
        /// Per digit, `(Q_D / q_i) mod p_o`: its length per target `o`, from
        /// `row_offsets[digit]`.
        pub rows: DevPtr<u64>,
        pub row_offsets: DevPtr<u64>,
        /// Digit `j` covers limbs `starts[j] .. starts[j + 1]` (`digits + 1` words).
        pub starts: DevPtr<u32>,
        pub limbs: u32,
        pub digits: u32,
        pub log_n: u32,
        /// Zero; spells out the tail padding.
        pub reserved: u32,
    }
}

kernel_args! {
    /// `lux_ckks_mod_down`: the rounding `P -> q_0..q_l` conversion
    /// (`fhe_api::ring::moddown::RoundingConverter`'s constants).
    pub struct CkksModDownArgs => "lux_ckks_mod_down", "LuxCkksModDownArgs" {
        /// `d`, `q_limbs` limbs.
        pub out: DevPtr<Residue>,
        /// The `P` limbs in coefficient form.
        pub input: DevPtr<Residue>,
        /// `q_0..q_l` then `P`.
        pub tables: DevPtr<GpuNttTable>,
        /// `h mod p_k`.
        pub half: DevPtr<u64>,
        /// `(P / p_k)^-1 mod p_k`.
        pub p_hat_inv: DevPtr<u64>,
        /// `c_k` and `s_k` of the fixed-point quotient.
        pub frac_c: DevPtr<u64>,
        pub frac_s: DevPtr<u32>,
        /// `(P / p_k) mod q_o`, `K` per output limb.
        pub p_hat_mod_q: DevPtr<u64>,
        /// `(v P + h) mod q_o`, `K + 1` per output limb.
        pub offset: DevPtr<u64>,
        pub q_limbs: u32,
        pub p_limbs: u32,
        pub log_n: u32,
        /// Polynomials: input `[part][K][N]`, output `[part][q_limbs][N]`.
        pub parts: u32,
    }
}

kernel_args! {
    /// `lux_ckks_inner_product`: the key-switching sums of every extended limb.
    pub struct CkksInnerArgs => "lux_ckks_inner_product", "LuxCkksInnerArgs" {
        /// The sums' limbs over `q_0..q_l`...
        pub u0: DevPtr<Residue>,
        pub u1: DevPtr<Residue>,
        /// ...and over `P` (right after them in an extended ciphertext; apart, so that
        /// ModDown transforms both halves' `P` limbs in one launch sequence).
        pub u0_hi: DevPtr<Residue>,
        pub u1_hi: DevPtr<Residue>,
        /// `[digit][limb][N]`: the ModUp of the switched polynomial.
        pub ext: DevPtr<Residue>,
        /// The key halves, `[digit][QP prime][N]` as `SwitchingKey::b` lays them out.
        pub key_b: DevPtr<Residue>,
        pub key_a: DevPtr<Residue>,
        /// A Galois permutation's gather; null for relinearization.
        pub index: DevPtr<u32>,
        pub tables: DevPtr<GpuNttTable>,
        /// `l + 1 + K`.
        pub limbs: u32,
        /// `l + 1`.
        pub q_limbs: u32,
        /// `L + 1`: where the key's `P` limbs start.
        pub q_len: u32,
        /// `L + 1 + K`.
        pub qp: u32,
        pub digits: u32,
        pub log_n: u32,
    }
}
