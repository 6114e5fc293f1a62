// Kernel arguments: each kernel takes one of these structs by value, its only parameter.
// They mirror the `#[repr(C)]` structs of fhe-gpu/src/args.rs field for field; the
// host appends `static_assert`s generated from the Rust side right after this file
// (fhe_gpu::args::layout_checks), so a mismatch is a compile error on every compiler.
// Device pointers are 64-bit; scalars are fixed-width; no struct has implicit padding.
// Field meanings are documented once, on the Rust fields.

struct LuxNttArgs {
    lux_w* data;
    const lux_w* twiddles;
    const lux_w* twiddles_shoup;
    u32 count;
    u32 inverse;
};

struct LuxBlindRotateArgs {
    const u32* input;
    const lux_w* bsk;
    const lux_w* psi;
    const lux_w* psi_shoup;
    const lux_w* ipsi;
    const lux_w* ipsi_shoup;
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
    u32* output;
    u32 count;
    u32 add;
};
