//! The kernel source: the `.cu` files under `kernels/`, compiled at run time by NVRTC
//! (CUDA), hiprtc (HIP) or, for tests, by the C++ compiler into the CPU emulator.
//!
//! The source is split into [`Program`]s, each compiled once per device:
//! - [`Program::RingNtt`]: the limb-batched ring NTT (`kernels/ring_ntt.cu`), one per
//!   word width; `N` and every prime are run-time values (table entries), so one module
//!   serves every ring `(N, q)`, the bit scheme's and each prime of a CKKS chain.
//! - [`Program::Tfhe`]: the bit scheme's blind rotation and key switching
//!   (`kernels/tfhe/`), one per parameter set: its shapes (`N`, `n`, `L`, base logs) are
//!   `#define`s, so loops have constant bounds; its prime is a table entry like any other.
//!   A multi-bit set's program holds its blind rotation only (`kernels/tfhe/multi_bit.cu`):
//!   the key switch of its 20-bit LWE words is not in the kernels yet.
//! - [`Program::Ckks`]: the CKKS kernels (`kernels/ckks/`, 64-bit words) with the ring
//!   NTT beside them, one module for every CKKS chain: `N`, the primes and every RNS
//!   constant are run-time values.
//!
//! `compat.h`, `arith.cuh`, `args.h` and `ntt.cuh` are shared by both.

use std::fmt;

use fhe_api::ring::modulus::shoup;
use fhe_api::ParamSet;

use crate::args::{
    layout_checks, layouts, BlindRotateArgs, CkksCenterArgs, CkksEltwiseArgs, CkksInnerArgs, CkksModDownArgs,
    CkksModUpArgs, KernelArgs, KeySwitchArgs, Layout, MultiBitBlindRotateArgs, RingNttArgs,
};

const COMPAT: &str = include_str!("../kernels/compat.h");
const ARITH: &str = include_str!("../kernels/arith.cuh");
const ARGS: &str = include_str!("../kernels/args.h");
const NTT: &str = include_str!("../kernels/ntt.cuh");
const RING_NTT: &str = include_str!("../kernels/ring_ntt.cu");
const TFHE_BLIND_ROTATE: &str = include_str!("../kernels/tfhe/blind_rotate.cuh");
const TFHE_BOOTSTRAP: &str = include_str!("../kernels/tfhe/bootstrap.cu");
const TFHE_MULTI_BIT: &str = include_str!("../kernels/tfhe/multi_bit.cu");
const TFHE_KEYSWITCH: &str = include_str!("../kernels/tfhe/keyswitch.cu");
const CKKS_RNS: &str = include_str!("../kernels/ckks/rns.cuh");
const CKKS_ELTWISE: &str = include_str!("../kernels/ckks/eltwise.cu");
const CKKS_RESCALE: &str = include_str!("../kernels/ckks/rescale.cu");
const CKKS_CONVERT: &str = include_str!("../kernels/ckks/convert.cu");
const CKKS_KEYSWITCH: &str = include_str!("../kernels/ckks/keyswitch.cu");

/// Which compiler the source is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Cuda,
    Hip,
    /// The CPU emulator of `fhe-gpu-emu` (C++20, blocks as threads).
    HostEmu,
}

/// One compiled unit of the kernel source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Program {
    /// `lux_ring_ntt` over residues of `word_bits` (32 or 64) bits.
    RingNtt { word_bits: u32 },
    /// `lux_blind_rotate` and `lux_key_switch` with the shapes of one parameter set; for
    /// a multi-bit set (`Params::grouping`), `lux_multi_bit_blind_rotate` alone.
    Tfhe(ParamSet),
    /// The CKKS kernels and the ring NTT, 64-bit words, every chain.
    Ckks,
}

impl Program {
    /// Every program a device may compile: what the emulator builds and the NVRTC test
    /// compiles.
    pub fn all() -> Vec<Program> {
        let rings = [32, 64].map(|word_bits| Program::RingNtt { word_bits });
        let multi_bit = ParamSet::PBS.into_iter().filter(|s| s.params().grouping().is_some());
        let sets = ParamSet::ALL.into_iter().chain(multi_bit).map(Program::Tfhe);
        rings.into_iter().chain(sets).chain([Program::Ckks]).collect()
    }

    /// A name usable as a C identifier and a file name (`ring_ntt_w64`, `tfhe_pn10qp27`).
    pub fn name(self) -> String {
        match self {
            Program::RingNtt { word_bits } => format!("ring_ntt_w{word_bits}"),
            Program::Tfhe(set) => format!("tfhe_{}", set.name().to_ascii_lowercase()),
            Program::Ckks => "ckks".to_string(),
        }
    }

    /// The residue word of the program's kernels.
    pub fn word_bits(self) -> u32 {
        match self {
            Program::RingNtt { word_bits } => word_bits,
            Program::Tfhe(set) => word_bits_for(set.params().q_ring()),
            Program::Ckks => 64,
        }
    }

    /// The kernel entry points the compiled module holds.
    pub fn kernels(self) -> &'static [&'static str] {
        match self {
            Program::RingNtt { .. } => &[RingNttArgs::KERNEL],
            Program::Tfhe(set) if set.params().grouping().is_some() => &[MultiBitBlindRotateArgs::KERNEL],
            Program::Tfhe(_) => &[BlindRotateArgs::KERNEL, KeySwitchArgs::KERNEL],
            Program::Ckks => &[
                RingNttArgs::KERNEL,
                CkksEltwiseArgs::KERNEL,
                CkksCenterArgs::KERNEL,
                CkksModUpArgs::KERNEL,
                CkksModDownArgs::KERNEL,
                CkksInnerArgs::KERNEL,
            ],
        }
    }

    /// The argument structs of [`Program::kernels`], in the same order.
    fn kernel_layouts(self) -> Vec<Layout> {
        let all = layouts();
        self.kernels()
            .iter()
            .map(|k| *all.iter().find(|l| l.kernel == Some(k)).expect("every kernel has a struct"))
            .collect()
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Program::RingNtt { word_bits } => write!(f, "ring NTT ({word_bits}-bit words)"),
            Program::Tfhe(set) => write!(f, "{set} bootstrap"),
            Program::Ckks => write!(f, "CKKS"),
        }
    }
}

/// Bits of the kernels' residue words for a prime: 32 when `q < 2^30` (so `3q` and a sum
/// of two residues fit: half the memory traffic, and 32-bit multiplies, which GPUs issue
/// at several times the rate of 64-bit ones), else 64.
pub fn word_bits_for(q: u64) -> u32 {
    if q < (1 << 30) {
        32
    } else {
        64
    }
}

/// `floor(w 2^bits / q)`: the Shoup companion of `w` for `bits`-bit words.
pub fn shoup_for(w: u64, q: u64, bits: u32) -> u64 {
    if bits == 64 {
        shoup(w, q)
    } else {
        (((w as u128) << bits) / q as u128) as u64
    }
}

/// Shared memory a block may use without opting in, on every CUDA and HIP device.
pub const DEFAULT_SHARED_BYTES: usize = 48 * 1024;

/// Whether the blind rotation keeps the 2L digit polynomials in shared memory (when
/// `(2 + 2L) N` words fit the default 48 KiB), and the dynamic shared bytes it needs.
pub fn blind_rotate_shared(set: ParamSet) -> (bool, usize) {
    let p = set.params();
    let word = word_bits_for(p.q_ring()) as usize / 8;
    let with_digits = (2 + p.rgsw_rows()) * p.big_n() * word;
    if with_digits <= DEFAULT_SHARED_BYTES {
        (true, with_digits)
    } else {
        (false, 2 * p.big_n() * word)
    }
}

/// The program's compile-time shapes, as `(name, value)` pairs of C literals. No prime
/// and nothing derived from one is among them.
pub fn defines(program: Program) -> Vec<(&'static str, String)> {
    let mut d = vec![("LUX_WORD_BITS", program.word_bits().to_string())];
    if let Program::Tfhe(set) = program {
        let p = set.params();
        let n = p.big_n();
        d.extend([
            ("LUX_DIGITS_IN_SMEM", u32::from(blind_rotate_shared(set).0).to_string()),
            ("LUX_N", n.to_string()),
            ("LUX_LOG_N", n.trailing_zeros().to_string()),
            ("LUX_L", p.bsk_levels.0.to_string()),
            ("LUX_BG_LOG", p.bsk_base_log.0.to_string()),
            ("LUX_BSK_DROP", p.bsk_dropped_levels().to_string()),
            ("LUX_LWE_N", p.n().to_string()),
            ("LUX_LOGQ", p.lwe_modulus_log.0.to_string()),
            ("LUX_KS_BASE_LOG", p.ksk_base_log.0.to_string()),
            ("LUX_KS_LEVELS", p.ksk_levels.0.to_string()),
        ]);
        if let Some(k) = p.grouping() {
            d.push(("LUX_GROUPING", k.to_string()));
        }
    }
    d
}

/// The whole translation unit of `program` in `dialect`.
pub fn kernel_source(program: Program, dialect: Dialect) -> String {
    let mut s = format!("// Lux FHE kernels: {program}, generated by fhe-gpu\n");
    match dialect {
        Dialect::Cuda => {}
        Dialect::Hip => s.push_str("#define LUX_HIP 1\n"),
        Dialect::HostEmu => s.push_str("#define LUX_HOST_EMU 1\n"),
    }
    for (name, value) in defines(program) {
        s.push_str(&format!("#define {name} {value}\n"));
    }
    let kernels: &[&str] = match program {
        Program::RingNtt { .. } => &[RING_NTT],
        Program::Tfhe(set) if set.params().grouping().is_some() => &[TFHE_BLIND_ROTATE, TFHE_MULTI_BIT],
        Program::Tfhe(_) => &[TFHE_BLIND_ROTATE, TFHE_BOOTSTRAP, TFHE_KEYSWITCH],
        Program::Ckks => &[RING_NTT, CKKS_RNS, CKKS_ELTWISE, CKKS_RESCALE, CKKS_CONVERT, CKKS_KEYSWITCH],
    };
    // The layout checks follow the structs they check; the arithmetic takes those structs.
    for part in [COMPAT, ARGS, &layout_checks(), ARITH, NTT].into_iter().chain(kernels.iter().copied()) {
        s.push_str(part);
        s.push('\n');
    }
    // The emulator's launcher finds kernels and their structs through this list.
    s.push_str("#define LUX_KERNEL_LIST(X)");
    for l in program.kernel_layouts() {
        s.push_str(&format!(" X({}, {})", l.kernel.expect("a kernel's struct"), l.c_name));
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kernel is defined once, taking its argument struct by value as its only
    /// parameter (the contract `KernelArgs` rests on), and every kernel struct belongs to
    /// exactly one program.
    #[test]
    fn every_kernel_takes_its_struct() {
        let mut seen = Vec::new();
        for program in Program::all() {
            let source = kernel_source(program, Dialect::Cuda);
            for l in program.kernel_layouts() {
                let k = l.kernel.expect("a kernel");
                assert_eq!(source.matches(&format!("LUX_KERNEL({k})(")).count(), 1, "{program}: {k}");
                assert!(source.contains(&format!("LUX_KERNEL({k})({} args)", l.c_name)), "{program}: {k}");
                assert!(source.contains(&format!("X({k}, {})", l.c_name)), "{program}: {k} not listed");
                seen.push(k);
            }
        }
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), layouts().iter().filter(|l| l.kernel.is_some()).count());
    }

    /// No prime reaches the compiler: the sets' sources differ from one another only in
    /// their shapes, and no define names Q.
    #[test]
    fn no_prime_is_compiled_in() {
        for set in ParamSet::every() {
            let q = set.params().q_ring().to_string();
            let source = kernel_source(Program::Tfhe(set), Dialect::Cuda);
            assert!(!source.contains(&q), "{set}: Q = {q} appears in the source");
            assert!(!source.contains("LUX_Q"), "{set}");
        }
        // The gate sets, and the PBS sets' (multi-bit) blind rotations.
        assert_eq!(Program::all().len(), 3 + ParamSet::ALL.len() + ParamSet::PBS.len());
        assert!(Program::all().contains(&Program::Tfhe(ParamSet::M2C2G3)));
        assert!(Program::all().contains(&Program::Tfhe(ParamSet::M2C2)));
        // The CKKS program has no shape defines at all: every chain is a table.
        assert_eq!(defines(Program::Ckks), vec![("LUX_WORD_BITS", "64".to_string())]);
        assert_eq!(Program::Tfhe(ParamSet::PN10QP27).name(), "tfhe_pn10qp27");
    }

    #[test]
    fn digits_in_shared_memory_where_they_fit() {
        // The two 1024-slot sets with 32-bit words keep their digits in shared memory.
        assert_eq!(blind_rotate_shared(ParamSet::PN10QP27), (true, 40 * 1024));
        assert_eq!(blind_rotate_shared(ParamSet::PN10QP25Q), (true, 48 * 1024));
        assert_eq!(blind_rotate_shared(ParamSet::PN11QP54), (false, 32 * 1024));
    }
}
