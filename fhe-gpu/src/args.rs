//! Typed kernel arguments: one `#[repr(C)]` struct per kernel, passed to it by value as
//! its only parameter, and the table entries kernels read through pointers (a prime's
//! constants, a limb's NTT tables). Each is mirrored field for field by a named C struct
//! in `kernels/args.h`, and the two are kept in step by [`layout_checks`]:
//! `static_assert`s generated from these definitions and compiled into every kernel
//! source, so NVRTC, hiprtc and the emulator's C++ compiler each refuse the source when a
//! field's name, offset, size or type differs (the emulator's build in CI, the NVRTC
//! test for sm_90).
//!
//! No prime is compiled into a kernel: each reads its modulus from a [`GpuModulus`] or
//! [`GpuNttTable`] entry, so one compiled program serves every prime of its word width.

use std::fmt::Write as _;
use std::marker::PhantomData;

use crate::driver::Word;

/// The kernels' residue word, `lux_w` in C: 32 or 64 bits per program
/// ([`crate::source::word_bits_for`]). Only a pointee type; never constructed.
pub enum Residue {}

/// A type with a C spelling in the kernel source.
pub trait CType {
    /// The spelling (`u32`, `lux_w`, `LuxModulus`), without `const` or `*`.
    const C_NAME: &'static str;
}

impl CType for u16 {
    const C_NAME: &'static str = "u16";
}
impl CType for u32 {
    const C_NAME: &'static str = "u32";
}
impl CType for u64 {
    const C_NAME: &'static str = "u64";
}
impl CType for Residue {
    const C_NAME: &'static str = "lux_w";
}

/// A device address of `T`s: a 64-bit word (every supported device and the emulator's
/// host use 64-bit pointers; the layout checks assert it), typed so that a table of
/// residues cannot be passed where the kernel reads 16-bit key words.
#[repr(transparent)]
pub struct DevPtr<T> {
    addr: u64,
    _pointee: PhantomData<fn() -> T>,
}

impl<T> DevPtr<T> {
    pub fn new(addr: u64) -> Self {
        DevPtr { addr, _pointee: PhantomData }
    }

    pub fn addr(self) -> u64 {
        self.addr
    }
}

// By hand: derives would demand `T: Clone` etc., and `Residue` is not even inhabited.
impl<T> Clone for DevPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevPtr<T> {}
/// The null address: what a table entry holds before its buffers are set.
impl<T> Default for DevPtr<T> {
    fn default() -> Self {
        DevPtr::new(0)
    }
}
impl<T> std::fmt::Debug for DevPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}", self.addr)
    }
}
impl<T> PartialEq for DevPtr<T> {
    fn eq(&self, other: &Self) -> bool {
        self.addr == other.addr
    }
}
impl<T> Eq for DevPtr<T> {}

/// What a field's type is in C: a scalar, a struct held by value, or a pointer to either
/// (`const` is not compared: it documents in C which buffers a kernel only reads).
pub trait FieldType {
    const C_NAME: &'static str;
    const POINTER: bool;
}

impl<T: CType> FieldType for T {
    const C_NAME: &'static str = T::C_NAME;
    const POINTER: bool = false;
}

impl<T: CType> FieldType for DevPtr<T> {
    const C_NAME: &'static str = T::C_NAME;
    const POINTER: bool = true;
}

/// One field of a C struct as the compiler laid it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
    /// The C spelling of the scalar, struct or pointee type.
    pub c_type: &'static str,
    pub pointer: bool,
}

/// A struct the host and the kernels share.
///
/// # Safety
/// Implementors are `#[repr(C)]`, hold only integers, [`DevPtr`]s and other `CStruct`s,
/// and have no padding (every byte is initialized, so [`CStruct::as_bytes`] is sound),
/// and they match the C struct [`CStruct::C_NAME`]. The `c_struct!` macro guarantees the
/// first three (a compile-time size sum) and [`layout_checks`] has every kernel compiler
/// check the last.
pub unsafe trait CStruct: Copy + Send + Sync + 'static {
    /// The C struct (in `kernels/args.h`).
    const C_NAME: &'static str;
    /// This type's name, for messages.
    const RUST_NAME: &'static str;
    /// Every field, in declaration order.
    const FIELDS: &'static [Field];

    /// The struct's bytes, as a driver hands them to the kernel or copies them to a table.
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: by the trait's contract `Self` has no padding and only integer fields,
        // so all `size_of::<Self>()` bytes are initialized; u8 has alignment 1.
        unsafe { std::slice::from_raw_parts((self as *const Self).cast::<u8>(), std::mem::size_of::<Self>()) }
    }
}

/// The argument struct of one kernel.
///
/// # Safety
/// As [`CStruct`], and kernel [`KernelArgs::KERNEL`] takes exactly this struct by value
/// as its one parameter (the source's `LUX_KERNEL(name)(CStruct args)`, checked by a test).
pub unsafe trait KernelArgs: CStruct {
    /// The kernel's entry point.
    const KERNEL: &'static str;
}

/// Declares a shared struct and its [`CStruct`], [`CType`] and [`Word`] implementations
/// from one list of fields, so the Rust layout, the field table and the C name cannot
/// drift apart.
macro_rules! c_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident => $c_name:literal {
            $( $(#[$fmeta:meta])* pub $field:ident: $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        // No padding: a driver copies every byte, and padding would be uninitialized.
        const _: () = assert!(std::mem::size_of::<$name>() == 0 $(+ std::mem::size_of::<$ty>())*);

        // SAFETY: `#[repr(C)]`, integer, `DevPtr` and `CStruct` fields only, no padding
        // (asserted above); the C side is checked by `layout_checks` in every kernel compile.
        unsafe impl CStruct for $name {
            const C_NAME: &'static str = $c_name;
            const RUST_NAME: &'static str = stringify!($name);
            const FIELDS: &'static [Field] = &[$(Field {
                name: stringify!($field),
                offset: std::mem::offset_of!($name, $field),
                size: std::mem::size_of::<$ty>(),
                c_type: <$ty as FieldType>::C_NAME,
                pointer: <$ty as FieldType>::POINTER,
            }),*];
        }

        impl CType for $name {
            const C_NAME: &'static str = $c_name;
        }

        // SAFETY: as for `CStruct`: no padding and integer fields only, so every byte is
        // initialized and every byte pattern is a valid value.
        unsafe impl Word for $name {}
    };
}

/// [`c_struct!`] for a kernel's argument struct, with its entry point.
macro_rules! kernel_args {
    (
        $(#[$meta:meta])*
        pub struct $name:ident => $kernel:literal, $c_name:literal { $($body:tt)* }
    ) => {
        c_struct! { $(#[$meta])* pub struct $name => $c_name { $($body)* } }

        // SAFETY: a `CStruct` (above); that kernel `$kernel` takes it is the test
        // `source::tests::every_kernel_takes_its_struct`.
        unsafe impl KernelArgs for $name {
            const KERNEL: &'static str = $kernel;
        }
    };
}

// The CKKS kernels' structs, declared with the macros above.
mod ckks;
pub use ckks::{CkksCenterArgs, CkksEltwiseArgs, CkksInnerArgs, CkksModDownArgs, CkksModUpArgs, EltwiseOp};

c_struct! {
    /// One prime modulus as the kernels' arithmetic reads it (`kernels/arith.cuh`): a
    /// table entry, so no prime is compiled into a kernel.
    pub struct GpuModulus => "LuxModulus" {
        /// The prime, `2 < q < 2^62` (below `2^30` for 32-bit words).
        pub q: u64,
        /// Barrett's `floor(2^(2k) / q)` for `k = bits`.
        pub barrett_mu: u64,
        /// `k`: the bit length of `q`.
        pub bits: u32,
        /// Zero; spells out the tail padding the 8-byte alignment would add.
        pub reserved: u32,
    }
}

impl GpuModulus {
    /// The constants of `q` (`2 < q < 2^62`, which the ring tables check first).
    pub fn new(q: u64) -> GpuModulus {
        let bits = 64 - q.leading_zeros();
        // k <= 62, so 2^(2k) / q < 2^(k+1) fits 64 bits.
        let barrett_mu = ((1u128 << (2 * bits)) / q as u128) as u64;
        GpuModulus { q, barrett_mu, bits, reserved: 0 }
    }
}

c_struct! {
    /// The negacyclic NTT of one ring `(N, q)` in one word width: the prime, `1/N`, and
    /// where its twiddles live on the device. A limb-batched launch reads one entry per
    /// limb, so the limbs of one launch may have different primes.
    pub struct GpuNttTable => "LuxNttTable" {
        pub modulus: GpuModulus,
        /// `N^-1 mod q`, for the inverse transform's scaling.
        pub n_inv: u64,
        /// Its Shoup companion for the table's word width.
        pub n_inv_shoup: u64,
        /// `psi^bitrev(k)`, N residues (`fhe_api::ring::ntt::NttTables::psi_rev`).
        pub psi: DevPtr<Residue>,
        pub psi_shoup: DevPtr<Residue>,
        /// `psi^-bitrev(k)`, N residues.
        pub ipsi: DevPtr<Residue>,
        pub ipsi_shoup: DevPtr<Residue>,
    }
}

kernel_args! {
    /// `lux_ring_ntt`: negacyclic NTTs of `transforms` polynomials, transform `t` over limb
    /// `t % limbs`, in place. One launch is a pass over the stages `[first_stage,
    /// last_stage)` (`kernels/ring_ntt.cu`); the host cuts the stages into passes as the
    /// backend's NTT variant says (`backend::variant`); the inverse's `1/N` is applied by
    /// the pass that runs its last stage.
    pub struct RingNttArgs => "lux_ring_ntt", "LuxRingNttArgs" {
        /// `[transform][N]` residues: polynomials of `limbs` limbs one after another.
        pub data: DevPtr<Residue>,
        /// One entry per limb.
        pub tables: DevPtr<GpuNttTable>,
        pub transforms: u32,
        pub limbs: u32,
        /// `log2 N`.
        pub log_n: u32,
        /// 0 forward (Cooley-Tukey), 1 inverse (Gentleman-Sande with the 1/N scaling).
        pub inverse: u32,
        pub first_stage: u32,
        pub last_stage: u32,
        /// 0: each thread holds one group of `2^(last - first)` words in registers (at most
        /// 4 stages); 1: each block holds `2^log_groups` groups in shared memory.
        pub shared: u32,
        /// `log2` of the groups per block of a shared-memory pass; 0 otherwise.
        pub log_groups: u32,
    }
}

kernel_args! {
    /// `lux_blind_rotate`: blind rotation and sample extraction, one block per ciphertext.
    pub struct BlindRotateArgs => "lux_blind_rotate", "LuxBlindRotateArgs" {
        /// `count` LWE ciphertexts of n + 1 words mod q.
        pub input: DevPtr<u32>,
        /// The bootstrap key, `[key][row][half][slot]` in evaluation form.
        pub bsk: DevPtr<Residue>,
        /// The ring's prime and NTT tables: a one-entry table.
        pub ring: DevPtr<GpuNttTable>,
        /// psi^e for e in 0..2N: monomials in evaluation form.
        pub psi_pow: DevPtr<Residue>,
        /// The odd exponent of psi at each of the N evaluation slots.
        pub slot_exp: DevPtr<u32>,
        /// Per ciphertext 2N residues, or (2 + 2L) N when the digits do not fit shared
        /// memory (`LUX_DIGITS_IN_SMEM` 0).
        pub workspace: DevPtr<Residue>,
        /// `count` extracted samples of N + 1 words mod Q.
        pub output: DevPtr<u64>,
        /// The look-up table: the test polynomial's N residues (`fhe_api::Lut`).
        pub lut: DevPtr<Residue>,
        pub count: u32,
        /// Zero; spells out the tail padding the 8-byte alignment would add.
        pub reserved: u32,
    }
}

kernel_args! {
    /// `lux_multi_bit_blind_rotate`: multi-bit blind rotation and sample extraction, one
    /// block per ciphertext; the fields of [`BlindRotateArgs`], the key
    /// `[group][term][row][half][slot]` in evaluation form.
    pub struct MultiBitBlindRotateArgs => "lux_multi_bit_blind_rotate", "LuxMultiBitBlindRotateArgs" {
        pub input: DevPtr<u32>,
        pub bsk: DevPtr<Residue>,
        pub ring: DevPtr<GpuNttTable>,
        pub psi_pow: DevPtr<Residue>,
        pub slot_exp: DevPtr<u32>,
        pub workspace: DevPtr<Residue>,
        pub output: DevPtr<u64>,
        pub lut: DevPtr<Residue>,
        pub count: u32,
        pub reserved: u32,
    }
}

kernel_args! {
    /// `lux_key_switch`: mod switch Q -> q and key switch N -> n, one block per sample.
    pub struct KeySwitchArgs => "lux_key_switch", "LuxKeySwitchArgs" {
        /// `count` extracted samples of N + 1 words mod Q.
        pub input: DevPtr<u64>,
        /// The key-switching key, `[sample][n + 1]` 16-bit words.
        pub ksk: DevPtr<u16>,
        /// The ring's prime Q: a one-entry table.
        pub modulus: DevPtr<GpuModulus>,
        /// `count` LWE ciphertexts of n + 1 words mod q.
        pub output: DevPtr<u32>,
        pub count: u32,
        /// Added to b (q/8 for a sign bootstrap, 0 for a bare key switch).
        pub add: u32,
    }
}

/// One shared struct as both sides must lay it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The kernel that takes it by value; `None` for a table entry.
    pub kernel: Option<&'static str>,
    pub c_name: &'static str,
    pub rust_name: &'static str,
    pub size: usize,
    pub align: usize,
    pub fields: &'static [Field],
}

impl Layout {
    /// A table entry's layout.
    pub fn table<T: CStruct>() -> Layout {
        Layout {
            kernel: None,
            c_name: T::C_NAME,
            rust_name: T::RUST_NAME,
            size: std::mem::size_of::<T>(),
            align: std::mem::align_of::<T>(),
            fields: T::FIELDS,
        }
    }

    /// A kernel argument struct's layout.
    pub fn kernel<A: KernelArgs>() -> Layout {
        Layout { kernel: Some(A::KERNEL), ..Layout::table::<A>() }
    }
}

/// Every shared struct, in the order of `kernels/args.h` (a struct after those it holds).
pub fn layouts() -> [Layout; 11] {
    [
        Layout::table::<GpuModulus>(),
        Layout::table::<GpuNttTable>(),
        Layout::kernel::<RingNttArgs>(),
        Layout::kernel::<BlindRotateArgs>(),
        Layout::kernel::<MultiBitBlindRotateArgs>(),
        Layout::kernel::<KeySwitchArgs>(),
        Layout::kernel::<CkksEltwiseArgs>(),
        Layout::kernel::<CkksCenterArgs>(),
        Layout::kernel::<CkksModUpArgs>(),
        Layout::kernel::<CkksModDownArgs>(),
        Layout::kernel::<CkksInnerArgs>(),
    ]
}

/// C++ `static_assert`s that each C struct has the Rust struct's size, alignment and,
/// field by field, name, offset, size and type. Appended to every kernel source after
/// `args.h`, so each compiler of the kernels checks the layout it will really use.
/// Written without the standard library (NVRTC has none): `LUX_OFFSETOF` (compat.h) and
/// a two-line `same` trait.
pub fn layout_checks() -> String {
    let mut s = String::from(
        "// Generated by fhe_gpu::args::layout_checks: the C structs above must match the Rust\n\
         // ones field for field (name, offset, size, type), else this source does not compile.\n\
         template <class A, class B> struct lux_same { static const bool value = false; };\n\
         template <class A> struct lux_same<A, A> { static const bool value = true; };\n\
         template <class T> struct lux_unconst { typedef T type; };\n\
         template <class T> struct lux_unconst<const T*> { typedef T* type; };\n",
    );
    for l in layouts() {
        let (c, rust) = (l.c_name, l.rust_name);
        // The message names the C struct's part and the value the Rust struct has.
        let mut check = |cond: String, what: &str, rust_has: &dyn std::fmt::Display| {
            let _ = writeln!(s, "static_assert({cond}, \"{c}{what} is not fhe_gpu::{rust}'s ({rust_has})\");");
        };
        check(format!("sizeof({c}) == {}", l.size), ": size", &l.size);
        check(format!("alignof({c}) == {}", l.align), ": alignment", &l.align);
        for f in l.fields {
            let n = f.name;
            let ty = format!("{}{}", f.c_type, if f.pointer { "*" } else { "" });
            check(format!("LUX_OFFSETOF({c}, {n}) == {}", f.offset), &format!(".{n}: offset"), &f.offset);
            check(format!("sizeof({c}::{n}) == {}", f.size), &format!(".{n}: size"), &f.size);
            check(format!("lux_same<lux_unconst<decltype({c}::{n})>::type, {ty}>::value"), &format!(".{n}: type"), &ty);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_tile_each_struct_without_gaps() {
        for l in layouts() {
            let mut at = 0;
            for f in l.fields {
                assert_eq!(f.offset, at, "{}.{}: a gap before it", l.rust_name, f.name);
                at += f.size;
            }
            assert_eq!(at, l.size, "{}: tail padding", l.rust_name);
        }
        let a = KeySwitchArgs {
            input: DevPtr::new(0x1122),
            ksk: DevPtr::new(3),
            modulus: DevPtr::new(4),
            output: DevPtr::new(5),
            count: 6,
            add: 7,
        };
        assert_eq!(&a.as_bytes()[..2], &[0x22, 0x11]);
        assert_eq!(a.as_bytes().len(), 40);
        assert_eq!(std::mem::size_of::<GpuNttTable>(), 72);
    }

    #[test]
    fn layout_checks_cover_every_field() {
        let checks = layout_checks();
        for l in layouts() {
            for f in l.fields {
                let c = l.c_name;
                assert!(checks.contains(&format!("LUX_OFFSETOF({c}, {})", f.name)), "{c}.{}", f.name);
            }
        }
        assert!(checks.contains("lux_same<lux_unconst<decltype(LuxKeySwitchArgs::ksk)>::type, u16*>"));
        // A struct held by value and a pointer to a table entry are checked by their C names.
        assert!(checks.contains("lux_same<lux_unconst<decltype(LuxNttTable::modulus)>::type, LuxModulus>"));
        assert!(checks.contains("lux_same<lux_unconst<decltype(LuxRingNttArgs::tables)>::type, LuxNttTable*>"));
    }

    /// Barrett's constant as `fhe_api::ring::modulus::Modulus` computes it, at both ends
    /// of the range.
    #[test]
    fn modulus_constants() {
        for q in [134_215_681u64, 18_014_398_509_404_161, (1 << 62) - 57] {
            let m = GpuModulus::new(q);
            assert_eq!(m.bits, 64 - q.leading_zeros());
            assert_eq!(m.barrett_mu as u128, (1u128 << (2 * m.bits)) / q as u128);
        }
    }
}
