//! The backend registry and the `LUX_FHE_BACKEND` contract (DESIGN.md):
//!
//! - `cpu`: the CPU oracle, even where a GPU is present;
//! - `cuda`, `hip`, `wgpu`: that backend is required; construction fails at once with
//!   its cause (not compiled in, driver library not found, no device), never a fallback;
//! - unset, empty or `auto`: the best available hardware backend (CUDA, then HIP, then
//!   wgpu on a hardware adapter), else the CPU; software adapters are never picked;
//! - anything else: an error listing the valid values.
//!
//! The registry is data: each backend crate exports one [`BackendEntry`]; a binary
//! registers the entries it was built with. A `kind:variant` value (`cpu:harvey`)
//! also selects an NTT variant.

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result, Unavailable};
use crate::ops::Backend;

/// The backends the runtime knows. The match arms below are exhaustive on purpose:
/// a new backend must be handled everywhere before it compiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum BackendKind {
    Cpu,
    Cuda,
    Hip,
    Wgpu,
}

impl BackendKind {
    pub const ALL: [BackendKind; 4] = [BackendKind::Cpu, BackendKind::Cuda, BackendKind::Hip, BackendKind::Wgpu];
    /// The order `auto` tries hardware backends in.
    pub const AUTO_ORDER: [BackendKind; 3] = [BackendKind::Cuda, BackendKind::Hip, BackendKind::Wgpu];

    pub const fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
            BackendKind::Hip => "hip",
            BackendKind::Wgpu => "wgpu",
        }
    }

    /// The cargo feature of the `lux-fhe` crate that compiles the backend in.
    pub const fn feature(self) -> &'static str {
        match self {
            BackendKind::Cpu => "(always built)",
            BackendKind::Cuda => "cuda",
            BackendKind::Hip => "hip",
            BackendKind::Wgpu => "wgpu",
        }
    }

    fn from_name(s: &str) -> Option<BackendKind> {
        BackendKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a backend's probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A hardware device answers.
    Hardware,
    /// Only a software device answers (lavapipe): usable when required, never by `auto`.
    Software,
    Unavailable(Unavailable),
}

/// Options every backend constructor takes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BackendOptions {
    /// NTT variant name; `None` is the backend's default (or `LUX_FHE_NTT`).
    pub ntt_variant: Option<String>,
    /// Device ordinal (`LUX_FHE_DEVICE`, default 0).
    pub device: usize,
}

/// One backend as a registry entry: its kind, a cheap probe, and its constructor.
#[derive(Clone, Copy)]
pub struct BackendEntry {
    pub kind: BackendKind,
    /// Must not panic, and must be cheap enough to call at start-up.
    pub probe: fn() -> Probe,
    pub create: fn(&BackendOptions) -> Result<Arc<dyn Backend>>,
}

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    Auto,
    Require(BackendKind),
}

/// The valid values of `LUX_FHE_BACKEND`, for error messages.
pub fn valid_backend_values() -> String {
    let mut v: Vec<&str> = BackendKind::ALL.iter().map(|k| k.name()).collect();
    v.push("auto");
    v.join(", ")
}

/// Parses a `LUX_FHE_BACKEND` / `--backend` value: `None`, empty or `auto` is automatic
/// choice; `kind` or `kind:ntt-variant` requires that backend.
pub fn parse_selection(value: Option<&str>) -> Result<(Selection, Option<String>)> {
    let raw = value.map(str::trim).unwrap_or("");
    let lower = raw.to_ascii_lowercase();
    if lower.is_empty() || lower == "auto" {
        return Ok((Selection::Auto, None));
    }
    let (kind, variant) = match lower.split_once(':') {
        Some((k, v)) if !v.is_empty() => (k, Some(v.to_string())),
        Some(_) => return Err(Error::UnknownBackend { value: raw.to_string(), valid: valid_backend_values() }),
        None => (lower.as_str(), None),
    };
    match BackendKind::from_name(kind) {
        Some(k) => Ok((Selection::Require(k), variant)),
        None => Err(Error::UnknownBackend { value: raw.to_string(), valid: valid_backend_values() }),
    }
}

/// The backends a binary was built with.
#[derive(Clone, Default)]
pub struct Registry {
    entries: Vec<BackendEntry>,
}

impl Registry {
    pub fn new(entries: impl IntoIterator<Item = BackendEntry>) -> Self {
        Registry { entries: entries.into_iter().collect() }
    }

    pub fn register(&mut self, entry: BackendEntry) {
        self.entries.retain(|e| e.kind != entry.kind);
        self.entries.push(entry);
    }

    /// True when this registry has an entry for `kind` (its cargo feature is on).
    pub fn contains(&self, kind: BackendKind) -> bool {
        self.entry(kind).is_some()
    }

    fn entry(&self, kind: BackendKind) -> Option<&BackendEntry> {
        self.entries.iter().find(|e| e.kind == kind)
    }

    /// Probes `kind`; a kind with no entry is `NotCompiledIn`.
    pub fn probe(&self, kind: BackendKind) -> Probe {
        match self.entry(kind) {
            Some(e) => (e.probe)(),
            None => Probe::Unavailable(Unavailable::NotCompiledIn { feature: kind.feature() }),
        }
    }

    /// True exactly when `kind` is compiled in and a device answers.
    pub fn available(&self, kind: BackendKind) -> bool {
        matches!(self.probe(kind), Probe::Hardware | Probe::Software)
    }

    /// Constructs the selected backend; never falls back from a required one.
    pub fn create(&self, selection: &Selection, options: &BackendOptions) -> Result<Arc<dyn Backend>> {
        match selection {
            Selection::Require(kind) => {
                let entry = self.entry(*kind).ok_or(Error::Unavailable {
                    backend: *kind,
                    cause: Unavailable::NotCompiledIn { feature: kind.feature() },
                })?;
                if let Probe::Unavailable(cause) = (entry.probe)() {
                    return Err(Error::Unavailable { backend: *kind, cause });
                }
                let b = (entry.create)(options)?;
                tracing::info!(backend = %b.name(), "backend selected (required)");
                Ok(b)
            }
            Selection::Auto => {
                for kind in BackendKind::AUTO_ORDER {
                    match self.probe(kind) {
                        Probe::Hardware => match (self.entry(kind).expect("probed entry").create)(options) {
                            Ok(b) => {
                                tracing::info!(backend = %b.name(), "backend selected (auto)");
                                return Ok(b);
                            }
                            Err(e) => tracing::warn!(backend = %kind, error = %e, "auto: skipping backend"),
                        },
                        Probe::Software => tracing::debug!(backend = %kind, "auto: skipping software adapter"),
                        Probe::Unavailable(cause) => tracing::debug!(backend = %kind, %cause, "auto: unavailable"),
                    }
                }
                let cpu = self.entry(BackendKind::Cpu).ok_or(Error::Unavailable {
                    backend: BackendKind::Cpu,
                    cause: Unavailable::NotCompiledIn { feature: "cpu" },
                })?;
                let b = (cpu.create)(options)?;
                tracing::info!(backend = %b.name(), "backend selected (auto: no hardware backend available)");
                Ok(b)
            }
        }
    }

    /// Reads `LUX_FHE_BACKEND`, `LUX_FHE_NTT` and `LUX_FHE_DEVICE` and constructs.
    pub fn from_env(&self) -> Result<Arc<dyn Backend>> {
        let backend = std::env::var("LUX_FHE_BACKEND").ok();
        let (selection, variant) = parse_selection(backend.as_deref())?;
        let ntt_variant = variant.or_else(|| std::env::var("LUX_FHE_NTT").ok().filter(|v| !v.is_empty()));
        self.create(&selection, &BackendOptions { ntt_variant, device: device_from_env()? })
    }
}

/// The device ordinal from `LUX_FHE_DEVICE` (default 0).
pub fn device_from_env() -> Result<usize> {
    parse_device(std::env::var("LUX_FHE_DEVICE").ok().as_deref())
}

/// Parses a `LUX_FHE_DEVICE` value: unset or blank is device 0; anything but a
/// non-negative integer is an [`Error::Environment`] naming the variable.
pub fn parse_device(value: Option<&str>) -> Result<usize> {
    match value.map(str::trim) {
        None | Some("") => Ok(0),
        Some(v) => v.parse().map_err(|_| Error::Environment {
            variable: "LUX_FHE_DEVICE",
            value: v.to_string(),
            valid: "a device ordinal (0, 1, ...)".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_contract_values() {
        assert_eq!(parse_selection(None).unwrap().0, Selection::Auto);
        assert_eq!(parse_selection(Some("")).unwrap().0, Selection::Auto);
        assert_eq!(parse_selection(Some("AUTO")).unwrap().0, Selection::Auto);
        assert_eq!(parse_selection(Some("cpu")).unwrap(), (Selection::Require(BackendKind::Cpu), None));
        assert_eq!(
            parse_selection(Some("cpu:harvey")).unwrap(),
            (Selection::Require(BackendKind::Cpu), Some("harvey".into()))
        );
        for k in ["cuda", "hip", "wgpu"] {
            assert!(matches!(parse_selection(Some(k)).unwrap().0, Selection::Require(_)));
        }
        let e = parse_selection(Some("bogus")).unwrap_err().to_string();
        assert!(e.contains("bogus") && e.contains("cpu, cuda, hip, wgpu, auto"), "{e}");
        assert!(parse_selection(Some("cpu:")).is_err());
    }

    #[test]
    fn device_ordinal_from_the_environment() {
        assert_eq!(parse_device(None).unwrap(), 0);
        assert_eq!(parse_device(Some("  ")).unwrap(), 0);
        assert_eq!(parse_device(Some(" 3 ")).unwrap(), 3);
        for bad in ["first", "-1", "1.5"] {
            let e = parse_device(Some(bad)).unwrap_err();
            assert!(
                matches!(&e, Error::Environment { variable: "LUX_FHE_DEVICE", value, .. } if value == bad),
                "{bad}: {e:?}"
            );
            let msg = e.to_string();
            assert!(msg.contains("LUX_FHE_DEVICE") && msg.contains("device ordinal"), "{msg}");
        }
    }

    #[test]
    fn required_backend_not_compiled_in_fails_fast() {
        let r = Registry::default();
        for k in [BackendKind::Cuda, BackendKind::Hip, BackendKind::Wgpu] {
            let e = r.create(&Selection::Require(k), &BackendOptions::default()).err().unwrap();
            let msg = e.to_string();
            assert!(msg.contains("not compiled in") && msg.contains(k.feature()), "{msg}");
            assert!(!r.available(k));
        }
    }
}
