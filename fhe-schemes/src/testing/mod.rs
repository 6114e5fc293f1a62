//! The shared conformance suite (feature `testing`): plain generic functions over any
//! backend; each backend crate stamps them into `#[test]`s with the macros here, naming
//! its backend constructor once.
//!
//! Every check compares raw words with the CPU oracle where it can (decoding hides
//! races), and otherwise decrypts and compares with the plaintext circuit.
//!
//! | module | holds |
//! |---|---|
//! | [`tfhe`] | the bit scheme: gates, noise, NTT, look-up tables; `conformance_tests!` |
//! | [`tags`] | key tags of the bit scheme |
//! | [`ckks`] | CKKS: operations against plaintext, hoisting, noise; `ckks_conformance_tests!` |

pub mod ckks;
pub mod tags;
pub mod tfhe;

/// The skip rule for a backend that may be absent: `Some` runs the test; `None` fails
/// it when `require_var` is `1` (CI that promised the device), and otherwise prints
/// `<test> skipped: <reason>` to stderr and lets the test pass as skipped.
pub fn require_or_skip<B>(
    backend: Option<B>,
    require_var: &str,
    reason: impl FnOnce() -> String,
    test: &str,
) -> Option<B> {
    if backend.is_some() {
        return backend;
    }
    let reason = reason();
    if std::env::var(require_var).is_ok_and(|v| v == "1") {
        panic!("{test}: backend required by {require_var}=1 but absent: {reason}");
    }
    eprintln!("{test} skipped: {reason}");
    None
}
