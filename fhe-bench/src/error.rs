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
    /// A result or recommendation file (or one about to be written) that does not
    /// follow its schema: a missing, unknown or mistyped field, or a broken rule across
    /// fields. Every problem found is listed, each with its JSON path.
    #[error("does not follow {schema}: {}", problems.join("; "))]
    Schema { schema: &'static str, problems: Vec<String> },
    /// An error reading one file, naming it.
    #[error("{}: {source}", path.display())]
    InFile {
        path: PathBuf,
        #[source]
        source: Box<Error>,
    },
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

    pub(crate) fn in_file(path: &std::path::Path, source: Error) -> Error {
        match source {
            // An I/O error names its path already.
            e @ Error::Io { .. } => e,
            e => Error::InFile { path: path.to_path_buf(), source: Box::new(e) },
        }
    }
}
