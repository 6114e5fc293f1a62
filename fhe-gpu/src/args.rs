//! Typed kernel arguments: one `#[repr(C)]` struct per kernel, passed to it by value as
//! its only parameter, mirrored field for field by a named C struct in
//! `kernels/args.h`. The two are kept in step by [`layout_checks`]: `static_assert`s
//! generated from these definitions and compiled into every kernel source, so NVRTC,
//! hiprtc and the emulator's C++ compiler each refuse the source when a field's name,
//! offset, size or type differs (the emulator's build in CI, the NVRTC test for sm_90).

use std::fmt::Write as _;
use std::marker::PhantomData;

/// The kernels' residue word, `lux_w` in C: 32 or 64 bits per set
/// ([`crate::source::word_bits`]). Only a pointee type; never constructed.
pub enum Residue {}

/// A type with a C spelling in the kernel source.
pub trait CType {
    /// The spelling (`u32`, `lux_w`), without `const` or `*`.
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

/// What a field's type is in C: a scalar or a pointer to one (`const` is not compared:
/// it documents in C which buffers a kernel only reads).
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

/// One field of an argument struct as the compiler laid it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
    /// The C spelling of the scalar or pointee type.
    pub c_type: &'static str,
    pub pointer: bool,
}

/// The argument struct of one kernel.
///
/// # Safety
/// Implementors are `#[repr(C)]`, hold only integers and [`DevPtr`]s, and have no
/// padding (every byte is initialized, so [`KernelArgs::as_bytes`] is sound), and they
/// match the C struct [`KernelArgs::C_NAME`] that kernel [`KernelArgs::KERNEL`] takes by
/// value. The `kernel_args!` macro guarantees the first three (a compile-time size sum)
/// and [`layout_checks`] has every kernel compiler check the last.
pub unsafe trait KernelArgs: Copy + Send + Sync + 'static {
    /// The kernel's entry point.
    const KERNEL: &'static str;
    /// The C struct it takes (in `kernels/args.h`).
    const C_NAME: &'static str;
    /// This type's name, for messages.
    const RUST_NAME: &'static str;
    /// Every field, in declaration order.
    const FIELDS: &'static [Field];

    /// The struct's bytes, as a driver hands them to the kernel.
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: by the trait's contract `Self` has no padding and only integer fields,
        // so all `size_of::<Self>()` bytes are initialized; u8 has alignment 1.
        unsafe { std::slice::from_raw_parts((self as *const Self).cast::<u8>(), std::mem::size_of::<Self>()) }
    }
}

/// Declares an argument struct and its [`KernelArgs`] implementation from one list of
/// fields, so the Rust layout, the field table and the C name cannot drift apart.
macro_rules! kernel_args {
    (
        $(#[$meta:meta])*
        pub struct $name:ident => $kernel:literal, $c_name:literal {
            $( $(#[$fmeta:meta])* pub $field:ident: $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        // No padding: a driver copies every byte, and padding would be uninitialized.
        const _: () = assert!(std::mem::size_of::<$name>() == 0 $(+ std::mem::size_of::<$ty>())*);

        // SAFETY: `#[repr(C)]`, integer and `DevPtr` fields only, no padding (asserted
        // above); the C side is checked by `layout_checks` in every kernel compile.
        unsafe impl KernelArgs for $name {
            const KERNEL: &'static str = $kernel;
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
    };
}

kernel_args! {
    /// `lux_ntt`: a batched negacyclic NTT, one block per polynomial, in place.
    pub struct NttArgs => "lux_ntt", "LuxNttArgs" {
        /// `count` polynomials of N residues.
        pub data: DevPtr<Residue>,
        /// psi (forward) or psi^-1 (inverse) in bit-reversed order, N residues.
        pub twiddles: DevPtr<Residue>,
        /// Their Shoup companions.
        pub twiddles_shoup: DevPtr<Residue>,
        pub count: u32,
        /// 0 forward, 1 inverse (with the 1/N scaling).
        pub inverse: u32,
    }
}

kernel_args! {
    /// `lux_blind_rotate`: blind rotation and sample extraction, one block per ciphertext.
    pub struct BlindRotateArgs => "lux_blind_rotate", "LuxBlindRotateArgs" {
        /// `count` LWE ciphertexts of n + 1 words mod q.
        pub input: DevPtr<u32>,
        /// The bootstrap key, `[key][row][half][slot]` in evaluation form.
        pub bsk: DevPtr<Residue>,
        pub psi: DevPtr<Residue>,
        pub psi_shoup: DevPtr<Residue>,
        pub ipsi: DevPtr<Residue>,
        pub ipsi_shoup: DevPtr<Residue>,
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
    /// `lux_key_switch`: mod switch Q -> q and key switch N -> n, one block per sample.
    pub struct KeySwitchArgs => "lux_key_switch", "LuxKeySwitchArgs" {
        /// `count` extracted samples of N + 1 words mod Q.
        pub input: DevPtr<u64>,
        /// The key-switching key, `[sample][n + 1]` 16-bit words.
        pub ksk: DevPtr<u16>,
        /// `count` LWE ciphertexts of n + 1 words mod q.
        pub output: DevPtr<u32>,
        pub count: u32,
        /// Added to b (q/8 for a sign bootstrap, 0 for a bare key switch).
        pub add: u32,
    }
}

/// One argument struct as both sides must lay it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub kernel: &'static str,
    pub c_name: &'static str,
    pub rust_name: &'static str,
    pub size: usize,
    pub align: usize,
    pub fields: &'static [Field],
}

impl Layout {
    pub fn of<A: KernelArgs>() -> Layout {
        Layout {
            kernel: A::KERNEL,
            c_name: A::C_NAME,
            rust_name: A::RUST_NAME,
            size: std::mem::size_of::<A>(),
            align: std::mem::align_of::<A>(),
            fields: A::FIELDS,
        }
    }
}

/// Every kernel's argument struct, in the order of the source's `LUX_KERNEL_LIST`.
pub fn layouts() -> [Layout; 3] {
    [Layout::of::<NttArgs>(), Layout::of::<BlindRotateArgs>(), Layout::of::<KeySwitchArgs>()]
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
        let a =
            KeySwitchArgs { input: DevPtr::new(0x1122), ksk: DevPtr::new(3), output: DevPtr::new(4), count: 5, add: 6 };
        assert_eq!(&a.as_bytes()[..2], &[0x22, 0x11]);
        assert_eq!(a.as_bytes().len(), 32);
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
    }
}
