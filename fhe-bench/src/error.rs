//! The one error type of `fhe-bench`.

use std::path::PathBuf;

/// Everything that can go wrong while measuring, writing or reading results.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("backend operation failed: {0}")]
    Fhe(#[from] fhe_api::Error),
    #[error("no samples to summarize")]
    NoSamples,
    #[error("invalid timing sample {0}")]
    InvalidSample(f64),
    #[error("invalid measurement plan: {0}")]
    InvalidPlan(String),
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("unknown operation `{value}`; valid: {valid}")]
    UnknownOperation { value: String, valid: String },
    #[error("unknown recommend suite `{value}`; valid: {valid}")]
    UnknownSuite { value: String, valid: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("result file does not follow bench/schema.json: {}", .0.join("; "))]
    Schema(Vec<String>),
    #[error("chart: {0}")]
    Chart(String),
    #[error("peer `{peer}`: {message}")]
    Peer { peer: &'static str, message: String },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}
