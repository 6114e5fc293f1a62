//! Circuits over the evaluator: what is written once from its operations, for every
//! backend with the CKKS capability.
//!
//! | module | holds |
//! |---|---|
//! | `chebyshev` | [`Chebyshev`]: interpolation of a function on an interval |
//! | `polynomial` | [`Evaluator::eval_chebyshev`]: a series on a ciphertext, baby-step giant-step |
//! | `linear` | [`LinearTransform`]: plaintext diagonals, hoisted baby-step giant-step |
//! | `sums` | sums over slots and strides, inner products |
//! | `fourier` | [`FourierSeries`]: a function's Fourier extension |
//! | `bootstrap` | [`Bootstrapper`]: ModRaise, CoeffsToSlots, EvalMod, SlotsToCoeffs; [`FunctionalBootstrapper`] |
//!
//! [`Evaluator::eval_chebyshev`]: crate::ckks::Evaluator::eval_chebyshev

pub mod bootstrap;
mod chebyshev;
mod fourier;
mod linear;
mod polynomial;
pub(crate) mod sums;

pub use bootstrap::memory::MemoryEstimate;
pub use bootstrap::{
    seed_two_chains, BootstrapConfig, Bootstrapper, EncapsulationKeys, FunctionalBootstrapper, FunctionalChain,
    FunctionalConfig, PhaseTimes,
};
pub use chebyshev::Chebyshev;
pub use fourier::{precision_floor_bits, range_of, relative_precision, FeFunction, FourierSeries, MAX_FOURIER_DEGREE};
pub use linear::{DiagonalForm, LinearTransform, PreparedLinearTransform};
pub use polynomial::{baby_steps, chebyshev_depth};
pub use sums::sum_rotations;
