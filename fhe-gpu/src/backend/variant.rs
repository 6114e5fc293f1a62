//! The GPU's NTT variants (seed 1's names): byte-identical implementations of the one
//! negacyclic NTT that differ in how the stages are cut into launches ("passes") and
//! where a pass keeps its words (`kernels/ring_ntt.cu`). Every ring NTT of the backend,
//! the bit scheme's and the CKKS batched transforms over a table of limbs alike, runs the
//! variant the backend was built with (`cuda:<variant>`, `LUX_FHE_NTT`).
//!
//! | name | passes at N = 2^16 | a pass's words |
//! |---|---|---|
//! | `radix2_compact_group4_smem8` | 2 (8 stages each) | shared memory, 4 groups of 256 words per block |
//! | `radix2_compact_group8_smem8` | 2 | shared memory, 8 groups per block |
//! | `radix2_compact_group16_smem8` | 2 | shared memory, 16 groups per block |
//! | `radix4_compact` | 8 (2 stages each) | registers, 4 words per thread |
//! | `radix16_compact` | 4 (4 stages each) | registers, 16 words per thread |
//! | `radix2_indexed` | 16 (1 stage each) | registers, 2 words per thread (diagnostic) |
//!
//! `smem8`: a shared-memory pass runs up to 8 stages (groups of 2^8 words);
//! `groupG`: G groups per block, so a load of the strided pass reads G adjacent words
//! (64-bit: 32, 64 or 128 bytes) per row. `radix2_indexed` is every stage in device
//! memory, the plainest plan: a reference for controlled experiments, left out of the
//! screening unless named (seed 1).

use fhe_api::{BackendKind, Error, Result};

/// One pass: stages `[first, last)`, in shared memory with `2^log_groups` groups per
/// block, or (`shared` false) one group per thread in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pass {
    pub first: u32,
    pub last: u32,
    pub shared: bool,
    pub log_groups: u32,
}

/// Most stages a register pass runs (16 words a thread: `lux_ring_ntt_regs` has
/// instantiations for 1 to 4).
const MAX_REGISTER_STAGES: u32 = 4;
/// Stages of a shared-memory pass ("smem8"): groups of 256 words, so two passes at
/// N = 2^16 and 16 groups of 64-bit words fill 32 KiB, within the 48 KiB every device
/// grants without opting in.
const SHARED_STAGES: u32 = 8;
// The widest shared pass (16 groups of 2^8 64-bit words) fits without opting in.
const _: () = assert!((16usize << SHARED_STAGES) * 8 <= crate::source::DEFAULT_SHARED_BYTES);

/// An NTT variant of the GPU backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuNttVariant {
    /// Radix-2 passes of up to 8 stages in shared memory, 4 groups a block.
    Group4Smem8,
    /// As `Group4Smem8` with 8 groups a block.
    Group8Smem8,
    /// As `Group4Smem8` with 16 groups a block.
    Group16Smem8,
    /// Passes of up to 2 stages (radix 4) in registers.
    Radix4,
    /// Passes of up to 4 stages (radix 16) in registers.
    Radix16,
    /// One stage per launch in device memory (diagnostic).
    Indexed,
}

/// Every variant in the order `list-backends` prints them; the first is the default.
pub const GPU_NTT_VARIANTS: [GpuNttVariant; 6] = [
    GpuNttVariant::Group16Smem8,
    GpuNttVariant::Group8Smem8,
    GpuNttVariant::Group4Smem8,
    GpuNttVariant::Radix16,
    GpuNttVariant::Radix4,
    GpuNttVariant::Indexed,
];

impl GpuNttVariant {
    /// The default: full 128-byte load segments in both passes at N = 2^16 with 64-bit
    /// words. Not yet confirmed by a screening on a device (docs/GPU.md).
    pub const DEFAULT: GpuNttVariant = GPU_NTT_VARIANTS[0];

    pub fn name(self) -> &'static str {
        match self {
            GpuNttVariant::Group4Smem8 => "radix2_compact_group4_smem8",
            GpuNttVariant::Group8Smem8 => "radix2_compact_group8_smem8",
            GpuNttVariant::Group16Smem8 => "radix2_compact_group16_smem8",
            GpuNttVariant::Radix4 => "radix4_compact",
            GpuNttVariant::Radix16 => "radix16_compact",
            GpuNttVariant::Indexed => "radix2_indexed",
        }
    }

    /// True for the variants kept for controlled experiments: a screening leaves them
    /// out unless they are named.
    pub fn diagnostic(self) -> bool {
        self == GpuNttVariant::Indexed
    }

    /// The variant named `name` (already normalised: `fhe_api::registry::normalise_variant`);
    /// an unknown name is `Error::UnknownNttVariant` listing every known one.
    pub fn parse(backend: BackendKind, name: &str) -> Result<GpuNttVariant> {
        GPU_NTT_VARIANTS.into_iter().find(|v| v.name() == name).ok_or_else(|| Error::UnknownNttVariant {
            backend,
            value: name.to_string(),
            valid: GPU_NTT_VARIANTS.map(|v| v.name()).join(", "),
        })
    }

    /// The passes of one transform of `2^log_n` words, in issue order (stage order in
    /// both directions: Gentleman-Sande's stages widen as Cooley-Tukey's narrow). A
    /// shared pass's stride is 0 or at least 5 (balanced passes of at most 8 stages),
    /// never between 0 and `log_groups`, as the kernel's load order assumes for speed.
    pub(crate) fn passes(self, log_n: u32) -> Vec<Pass> {
        let (most, shared, log_groups) = match self {
            GpuNttVariant::Group4Smem8 => (SHARED_STAGES, true, 2),
            GpuNttVariant::Group8Smem8 => (SHARED_STAGES, true, 3),
            GpuNttVariant::Group16Smem8 => (SHARED_STAGES, true, 4),
            GpuNttVariant::Radix4 => (2, false, 0),
            GpuNttVariant::Radix16 => (MAX_REGISTER_STAGES, false, 0),
            GpuNttVariant::Indexed => (1, false, 0),
        };
        // As few passes as `most` allows, their sizes within one of each other (13
        // stages in radix 16 are 4 + 3 + 3 + 3, not 4 + 4 + 4 + 1).
        let count = log_n.div_ceil(most).max(1);
        let mut first = 0;
        (0..count)
            .map(|i| {
                let len = log_n / count + u32::from(i < log_n % count);
                let pass = Pass { first, last: first + len, shared, log_groups };
                first += len;
                pass
            })
            .filter(|p| p.last > p.first)
            .collect()
    }
}

impl std::fmt::Display for GpuNttVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_an_unknown_one_lists_them() {
        for v in GPU_NTT_VARIANTS {
            assert_eq!(GpuNttVariant::parse(BackendKind::Cuda, v.name()).unwrap(), v);
        }
        let e = GpuNttVariant::parse(BackendKind::Hip, "radix8").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::UnknownNttVariant { backend: BackendKind::Hip, .. }), "{msg}");
        for v in GPU_NTT_VARIANTS {
            assert!(msg.contains(v.name()), "{msg}");
        }
        let diagnostic: Vec<_> = GPU_NTT_VARIANTS.into_iter().filter(|v| v.diagnostic()).collect();
        assert_eq!(diagnostic, [GpuNttVariant::Indexed]);
        assert!(!GpuNttVariant::DEFAULT.diagnostic());
    }

    /// Every stage runs once, in order, in passes of the variant's size, and a register
    /// pass has a kernel instantiation (1 to 4 stages).
    #[test]
    fn passes_cover_every_stage_once() {
        for v in GPU_NTT_VARIANTS {
            for log_n in 1..=17 {
                let plan = v.passes(log_n);
                let mut next = 0;
                for p in &plan {
                    assert_eq!(p.first, next, "{v}, log_n {log_n}: a gap or overlap");
                    assert!(p.last > p.first);
                    let most = if p.shared { SHARED_STAGES } else { MAX_REGISTER_STAGES };
                    assert!(p.last - p.first <= most, "{v}, log_n {log_n}: {p:?}");
                    next = p.last;
                }
                assert_eq!(next, log_n, "{v}");
                let sizes: Vec<u32> = plan.iter().map(|p| p.last - p.first).collect();
                assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "{v}: {sizes:?}");
            }
        }
        let sizes = |v: GpuNttVariant, log_n| v.passes(log_n).iter().map(|p| p.last - p.first).collect::<Vec<_>>();
        assert_eq!(sizes(GpuNttVariant::DEFAULT, 16), [8, 8]);
        assert_eq!(sizes(GpuNttVariant::Radix16, 13), [4, 3, 3, 3]);
        assert_eq!(sizes(GpuNttVariant::Radix4, 16), [2; 8]);
        assert_eq!(sizes(GpuNttVariant::Indexed, 3), [1, 1, 1]);
    }
}
