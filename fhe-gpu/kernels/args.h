// The structs the host and the kernels share: table entries kernels read through
// pointers, and each kernel's arguments (taken by value, its only parameter). They
// mirror the `#[repr(C)]` structs of fhe-gpu/src/args.rs field for field; the host
// appends `static_assert`s generated from the Rust side right after this file
// (fhe_gpu::args::layout_checks), so a mismatch is a compile error on every compiler.
// Device pointers are 64-bit; scalars are fixed-width; no struct has implicit padding.
// Field meanings are documented once, on the Rust fields.

// The residue word: 32 bits where every prime of the program is below 2^30
// (fhe_gpu::source::word_bits_for: half the memory traffic, and 32-bit multiplies, which
// GPUs issue at several times the rate of 64-bit ones), else 64 bits.
#if LUX_WORD_BITS == 32
typedef u32 lux_w;
#else
typedef u64 lux_w;
#endif

// One prime (GpuModulus).
struct LuxModulus {
    u64 q;
    u64 barrett_mu;
    u32 bits;
    u32 reserved;
};

// One ring (N, q)'s NTT in this word width (GpuNttTable).
struct LuxNttTable {
    LuxModulus modulus;
    u64 n_inv;
    u64 n_inv_shoup;
    const lux_w* psi;
    const lux_w* psi_shoup;
    const lux_w* ipsi;
    const lux_w* ipsi_shoup;
};

struct LuxRingNttArgs {
    lux_w* data;
    const LuxNttTable* tables;
    u32 transforms;
    u32 limbs;
    u32 log_n;
    u32 inverse;
    u32 first_stage;
    u32 last_stage;
    u32 shared;
    u32 log_groups;
};

struct LuxBlindRotateArgs {
    const u32* input;
    const lux_w* bsk;
    const LuxNttTable* ring;
    const lux_w* psi_pow;
    const u32* slot_exp;
    lux_w* workspace;
    u64* output;
    const lux_w* lut;
    u32 count;
    u32 reserved;
};

struct LuxMultiBitBlindRotateArgs {
    const u32* input;
    const lux_w* bsk;
    const LuxNttTable* ring;
    const lux_w* psi_pow;
    const u32* slot_exp;
    lux_w* workspace;
    u64* output;
    const lux_w* lut;
    u32 count;
    u32 reserved;
};

struct LuxKeySwitchArgs {
    const u64* input;
    const u16* ksk;
    const LuxModulus* modulus;
    u32* output;
    u32 count;
    u32 add;
};

// ---- CKKS (kernels/ckks/): 64-bit words; `tables` hold one entry per limb.

struct LuxCkksEltwiseArgs {
    lux_w* out;
    const lux_w* x;
    const lux_w* y;
    const lux_w* y_hi;
    const lux_w* z;
    const u32* index;
    const u64* a;
    const u64* b;
    const LuxNttTable* tables;
    u64 out_stride;
    u64 x_stride;
    u64 y_stride;
    u64 z_stride;
    u32 parts;
    u32 limbs;
    u32 log_n;
    u32 y_split;
    u32 op;
    u32 reserved;
};

struct LuxCkksCenterArgs {
    lux_w* out;
    const lux_w* input;
    const LuxNttTable* source;
    const LuxNttTable* tables;
    u32 parts;
    u32 limbs;
    u32 log_n;
    u32 reserved;
};

struct LuxCkksModUpArgs {
    lux_w* out;
    const lux_w* input;
    const LuxNttTable* tables;
    const u64* q_hat_inv;
    const u64* rows;
    const u64* row_offsets;
    const u32* starts;
    u32 limbs;
    u32 digits;
    u32 log_n;
    u32 reserved;
};

struct LuxCkksModDownArgs {
    lux_w* out;
    const lux_w* input;
    const LuxNttTable* tables;
    const u64* half;
    const u64* p_hat_inv;
    const u64* frac_c;
    const u32* frac_s;
    const u64* p_hat_mod_q;
    const u64* offset;
    u32 q_limbs;
    u32 p_limbs;
    u32 log_n;
    u32 parts;
};

struct LuxCkksInnerArgs {
    lux_w* u0;
    lux_w* u1;
    lux_w* u0_hi;
    lux_w* u1_hi;
    const lux_w* ext;
    const lux_w* key_b;
    const lux_w* key_a;
    const u32* index;
    const LuxNttTable* tables;
    u32 limbs;
    u32 q_limbs;
    u32 q_len;
    u32 qp;
    u32 digits;
    u32 log_n;
};
