//! The one error type of the runtime. Every variant names a cause a user can act on.

use crate::registry::BackendKind;
use crate::tag::KeyTag;

/// Why a backend cannot be used on this machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unavailable {
    /// The binary was built without the backend's cargo feature.
    #[error("not compiled in: rebuild with cargo feature `{feature}` of the `lux-fhe` crate")]
    NotCompiledIn { feature: &'static str },
    /// The driver or runtime library could not be loaded.
    #[error("driver library not found: {library} ({detail})")]
    DriverMissing { library: String, detail: String },
    /// The driver loaded but reported no usable device.
    #[error("no device: {detail}")]
    NoDevice { detail: String },
    /// A device answered but lacks something the backend needs.
    #[error("unsupported device: {detail}")]
    Unsupported { detail: String },
}

/// A failure to decode bytes into a key or ciphertext.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    #[error("input truncated: need {needed} bytes, have {have}")]
    Truncated { needed: usize, have: usize },
    #[error("{extra} trailing bytes after the object")]
    TrailingBytes { extra: usize },
    #[error("bad magic: not a Lux FHE object")]
    BadMagic,
    #[error("unsupported format version {found}: this build reads format version {supported} only (objects of another format version must be regenerated or converted by the build that wrote them)")]
    UnsupportedVersion { found: u16, supported: u16 },
    #[error("wrong object kind: expected {expected}, found {found}")]
    WrongKind { expected: &'static str, found: String },
    #[error("unknown parameter set id {0}")]
    UnknownParamSet(u16),
    #[error("length field says {found}, parameter set {params} needs {expected}")]
    BadLength { params: &'static str, expected: u64, found: u64 },
    #[error("value {value} at index {index} is out of range (must be < {bound})")]
    OutOfRange { index: usize, value: u64, bound: u64 },
    #[error("{0}")]
    Invalid(String),
}

/// Every error the runtime returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A backend was required but cannot run here.
    #[error("backend `{backend}` unavailable: {cause}")]
    Unavailable {
        backend: BackendKind,
        #[source]
        cause: Unavailable,
    },
    /// `LUX_FHE_BACKEND` (or a `--backend` flag) named no backend.
    #[error("unknown backend `{value}`; valid values: {valid}")]
    UnknownBackend { value: String, valid: String },
    /// An unknown parameter-set name.
    #[error("unknown parameter set `{value}`; valid values: {valid}")]
    UnknownParamSet { value: String, valid: String },
    /// An unknown or unsupported NTT variant name.
    #[error("unknown or unsupported NTT variant `{value}` for backend {backend}; valid values: {valid}")]
    UnknownNttVariant { backend: BackendKind, value: String, valid: String },
    /// Objects of different parameter sets (bit scheme) or CKKS parameters were combined.
    #[error("parameter set mismatch: expected {expected}, found {found}")]
    ParamMismatch { expected: String, found: String },
    /// An object made under another key (its key tag differs from the key's), two
    /// ciphertexts of different keys combined, or an object relabelled to another
    /// parameter set. Tags print as 16 hex digits (`docs/FORMAT.md`, "Key tags").
    #[error("wrong key: expected key tag {expected}, found {found} (an object made under another key, or relabelled to another parameter set)")]
    WrongKey { expected: KeyTag, found: KeyTag },
    /// A prepared key was used with a backend other than the one that prepared it.
    #[error("prepared key belongs to backend {owner}, not {used}")]
    WrongBackend { owner: String, used: String },
    /// Bytes that are not a valid object.
    #[error("decode error: {0}")]
    Decode(#[from] DecodeError),
    /// A ring that no NTT exists for (`N` not a power of two in range, `q` not a prime
    /// `= 1 mod 2N`, a modulus too wide), or an RNS basis that is not one.
    #[error("invalid ring: {0}")]
    InvalidRing(String),
    /// A configuration whose modulus exceeds the HE standard's 128-bit bound.
    #[error("insecure parameters: log2(QP) = {log_qp} bits exceeds the 128-bit bound of {bound} bits for N = {n} ({secret} secret)")]
    SecurityBound { log_qp: u32, bound: u32, n: usize, secret: &'static str },
    /// A CKKS operand whose level does not allow the operation: operands at different
    /// levels in the manual mode, a rescale with no level left, a level above the chain.
    #[error("{op}: operand at level {found}, {needed}")]
    Level { op: &'static str, found: usize, needed: LevelNeed },
    /// CKKS operands whose scales differ (`add`, `sub` and their forms need one scale).
    #[error(
        "{op}: scales 2^{:.4} and 2^{:.4} differ; bring one to the other's with Evaluator::rescale_to \
         (or evaluate in the automatic mode)",
        left.log2(), right.log2()
    )]
    ScaleMismatch { op: &'static str, left: f64, right: f64 },
    /// A CKKS result whose scale would reach the modulus it lives in (its message would
    /// wrap): refused before the operation runs.
    #[error(
        "{op}: the result's scale 2^{scale_log2:.1} would reach the modulus 2^{modulus_log2:.1} at level {level}; \
         rescale the operands first (Evaluator::rescale) or encode at a smaller scale"
    )]
    ScaleOverflow { op: &'static str, scale_log2: f64, modulus_log2: f64, level: usize },
    /// An evaluation key that was not generated.
    #[error("missing key: {0}")]
    MissingKey(KeyNeed),
    /// A scheme this backend does not implement.
    #[error("backend {backend} does not implement {scheme}")]
    Unsupported { backend: String, scheme: &'static str },
    /// An environment variable the runtime reads holds a value it cannot use; the
    /// message names the variable and what it accepts, so the fix is in the shell.
    #[error("environment variable {variable}=`{value}` is invalid; valid values: {valid}")]
    Environment { variable: &'static str, value: String, valid: String },
    /// A blind rotation's look-up table the set cannot use (length, a word at or above
    /// `Q`, a function that is not negacyclic); the detail names which.
    #[error("invalid look-up table for {params}: {detail}")]
    InvalidLut { params: &'static str, detail: String },
    /// A structurally invalid argument (wrong length, mismatched batch sizes, ...).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The operating system's random number generator failed.
    #[error("OS randomness unavailable: {0}")]
    Randomness(String),
    /// A device call failed after the backend was constructed.
    #[error("backend `{backend}` failed: {detail}")]
    Device { backend: BackendKind, detail: String },
    /// A request that would need more memory than the machine has available: refused
    /// before anything is allocated, instead of being killed by the kernel.
    #[error("{what} needs about {needed} bytes ({:.1} GiB); {available} bytes ({:.1} GiB) are available", *.needed as f64 / 1073741824.0, *.available as f64 / 1073741824.0)]
    OutOfMemory { what: String, needed: u64, available: u64 },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What level an operation needed ([`Error::Level`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LevelNeed {
    /// The other operand's level (manual mode).
    Equal(usize),
    /// At least this level (a rescale needs level 1).
    AtLeast(usize),
    /// At most this level (a level cannot be raised; the chain's top).
    AtMost(usize),
    /// At most this level: the key the operation needs was prepared for switches up to
    /// it only (`Evaluator::add_keys_up_to`).
    KeyUpTo(usize),
}

impl std::fmt::Display for LevelNeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LevelNeed::Equal(l) => write!(
                f,
                "the other operand is at level {l}: drop the higher with Evaluator::drop_to_level or \
                 Evaluator::rescale_to (or evaluate in the automatic mode)"
            ),
            LevelNeed::AtLeast(l) => {
                write!(f, "needs level {l} or above: the chain is spent (bootstrap or re-encrypt)")
            }
            LevelNeed::AtMost(l) => write!(f, "needs level {l} or below (a level cannot be raised)"),
            LevelNeed::KeyUpTo(l) => write!(
                f,
                "needs level {l} or below: its key was prepared for switches up to level {l} only \
                 (add it whole with Evaluator::add_keys, or drop the operand's level first)"
            ),
        }
    }
}

/// Which evaluation key an operation needed ([`Error::MissingKey`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyNeed {
    Relinearization,
    /// A Galois key for a rotation by `steps` slots (its Galois element).
    Rotation {
        steps: i64,
        element: u64,
    },
    Conjugation {
        element: u64,
    },
}

impl std::fmt::Display for KeyNeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyNeed::Relinearization => {
                f.write_str("no relinearization key (KeygenOptions::relin, or Context::relin_key from the secret key)")
            }
            KeyNeed::Rotation { steps, element } => write!(
                f,
                "no Galois key for a rotation by {steps} (element {element}): KeygenOptions::rotations, or \
                 Context::rotation_keys from the secret key and Evaluator::add_keys"
            ),
            KeyNeed::Conjugation { element } => write!(
                f,
                "no Galois key for conjugation (element {element}): KeygenOptions::conjugation, or \
                 Context::conjugation_key from the secret key and Evaluator::add_keys"
            ),
        }
    }
}
