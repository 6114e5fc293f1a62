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
//!
//! Environment parsing is split in two: [`EnvVars::read`] is the only reader of the real
//! environment (raw `OsString`s, nothing interpreted), and [`resolve`] turns those raw
//! values into a selection and options. Tests call [`resolve`] with made-up values, so
//! none mutates the process environment. The precedence table is in README.md
//! ("Choosing a backend").

use std::ffi::{OsStr, OsString};
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
/// choice; `kind` or `kind:ntt-variant` requires that backend. The variant goes through
/// [`normalise_variant`], as `LUX_FHE_NTT` does.
pub fn parse_selection(value: Option<&str>) -> Result<(Selection, Option<String>)> {
    let raw = value.map(str::trim).unwrap_or("");
    let unknown = || Error::UnknownBackend { value: raw.to_string(), valid: valid_backend_values() };
    let (kind, variant) = match raw.split_once(':') {
        Some((k, v)) => (k, Some(normalise_variant(v).ok_or_else(unknown)?)),
        None => (raw, None),
    };
    let kind = kind.trim().to_ascii_lowercase();
    if variant.is_none() && (kind.is_empty() || kind == "auto") {
        return Ok((Selection::Auto, None));
    }
    match BackendKind::from_name(&kind) {
        Some(k) => Ok((Selection::Require(k), variant)),
        None => Err(unknown()),
    }
}

/// The one normalisation of an NTT variant name, wherever it comes from (the `:variant`
/// of `LUX_FHE_BACKEND` or of `Engine::with_backend`'s selection, or `LUX_FHE_NTT`):
/// surrounding whitespace trimmed, ASCII lower-cased; blank is `None` (no variant).
pub fn normalise_variant(value: &str) -> Option<String> {
    let v = value.trim().to_ascii_lowercase();
    (!v.is_empty()).then_some(v)
}

/// The raw values of the variables the registry reads, exactly as the OS holds them
/// (`None`: unset). [`EnvVars::read`] fills it from the process environment; [`resolve`]
/// interprets it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvVars {
    /// `LUX_FHE_BACKEND`.
    pub backend: Option<OsString>,
    /// `LUX_FHE_NTT`.
    pub ntt: Option<OsString>,
    /// `LUX_FHE_DEVICE`.
    pub device: Option<OsString>,
}

impl EnvVars {
    pub const BACKEND: &'static str = "LUX_FHE_BACKEND";
    pub const NTT: &'static str = "LUX_FHE_NTT";
    pub const DEVICE: &'static str = "LUX_FHE_DEVICE";

    /// Reads the three variables from the process environment; interprets nothing.
    pub fn read() -> EnvVars {
        EnvVars {
            backend: std::env::var_os(Self::BACKEND),
            ntt: std::env::var_os(Self::NTT),
            device: std::env::var_os(Self::DEVICE),
        }
    }
}

/// A variable's raw value as text: unset is `None`; a value that is not UTF-8 is an
/// [`Error::Environment`] naming `variable` (the value shown lossily), never "unset".
/// `valid` describes what the variable accepts, for that error.
pub fn env_text<'a>(variable: &'static str, raw: Option<&'a OsStr>, valid: &str) -> Result<Option<&'a str>> {
    match raw {
        None => Ok(None),
        Some(v) => v.to_str().map(Some).ok_or_else(|| Error::Environment {
            variable,
            value: v.to_string_lossy().into_owned(),
            valid: format!("UTF-8 text: {valid}"),
        }),
    }
}

/// What `LUX_FHE_NTT` accepts, for error messages.
const NTT_VALID: &str = "an NTT variant name of the selected backend, or unset";

/// The one rule that turns the variables into a selection and backend options
/// (README.md, "Choosing a backend", has it as a table):
///
/// - `explicit` (`Engine::with_backend`'s argument) takes the place of
///   `LUX_FHE_BACKEND`, which is then not read at all; `None` reads `LUX_FHE_BACKEND`;
/// - the variant is the selection's `:variant` or `LUX_FHE_NTT` (both normalised by
///   [`normalise_variant`]); when both name one, they must be the same variant, else
///   this is an [`Error::Environment`] naming `LUX_FHE_NTT` and both values;
/// - `LUX_FHE_DEVICE` is read in both cases ([`parse_device`]);
/// - a value that is not UTF-8 is an error naming its variable ([`env_text`]).
pub fn resolve(env: &EnvVars, explicit: Option<&str>) -> Result<(Selection, BackendOptions)> {
    let selection_text = match explicit {
        Some(s) => Some(s),
        None => env_text(EnvVars::BACKEND, env.backend.as_deref(), &valid_backend_values())?,
    };
    let ntt = env_text(EnvVars::NTT, env.ntt.as_deref(), NTT_VALID)?;
    let device = parse_device(env_text(EnvVars::DEVICE, env.device.as_deref(), DEVICE_VALID)?)?;
    let (selection, named) = parse_selection(selection_text)?;
    let ntt_variant = match (named, ntt.and_then(normalise_variant)) {
        (Some(a), Some(b)) if a != b => {
            let source = match explicit {
                Some(s) => format!("Engine::with_backend(\"{}\")", s.trim()),
                None => format!("{}=`{}`", EnvVars::BACKEND, selection_text.unwrap_or("").trim()),
            };
            return Err(Error::Environment {
                variable: EnvVars::NTT,
                value: ntt.unwrap_or("").trim().to_string(),
                valid: format!("unset, empty or `{a}`, since {source} already names the NTT variant `{a}`"),
            });
        }
        (a, b) => a.or(b),
    };
    Ok((selection, BackendOptions { ntt_variant, device }))
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

    /// Reads `LUX_FHE_BACKEND`, `LUX_FHE_NTT` and `LUX_FHE_DEVICE` and constructs
    /// ([`resolve`] with no explicit selection).
    pub fn from_env(&self) -> Result<Arc<dyn Backend>> {
        self.from_vars(&EnvVars::read(), None)
    }

    /// Constructs from the given raw variables and optional explicit selection
    /// ([`resolve`]); `Engine::with_backend` is this with [`EnvVars::read`].
    pub fn from_vars(&self, env: &EnvVars, explicit: Option<&str>) -> Result<Arc<dyn Backend>> {
        let (selection, options) = resolve(env, explicit)?;
        self.create(&selection, &options)
    }
}

/// What `LUX_FHE_DEVICE` accepts, for error messages.
const DEVICE_VALID: &str = "a device ordinal (0, 1, ...)";

/// The device ordinal from `LUX_FHE_DEVICE` (default 0); a value that is not UTF-8 is
/// an error naming the variable.
pub fn device_from_env() -> Result<usize> {
    let raw = std::env::var_os(EnvVars::DEVICE);
    parse_device(env_text(EnvVars::DEVICE, raw.as_deref(), DEVICE_VALID)?)
}

/// Parses a `LUX_FHE_DEVICE` value: unset or blank is device 0; anything but a
/// non-negative integer is an [`Error::Environment`] naming the variable.
pub fn parse_device(value: Option<&str>) -> Result<usize> {
    match value.map(str::trim) {
        None | Some("") => Ok(0),
        Some(v) => v.parse().map_err(|_| Error::Environment {
            variable: EnvVars::DEVICE,
            value: v.to_string(),
            valid: DEVICE_VALID.into(),
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

    fn vars(backend: Option<&str>, ntt: Option<&str>, device: Option<&str>) -> EnvVars {
        EnvVars { backend: backend.map(Into::into), ntt: ntt.map(Into::into), device: device.map(Into::into) }
    }

    /// The variant `resolve` picks, through `from_env` (LUX_FHE_BACKEND = `selection`)
    /// and through `with_backend(selection)` (LUX_FHE_BACKEND unset, then set to junk).
    fn both(selection: &str, ntt: Option<&str>) -> [Result<(Selection, BackendOptions)>; 3] {
        [
            resolve(&vars(Some(selection), ntt, None), None),
            resolve(&vars(None, ntt, None), Some(selection)),
            resolve(&vars(Some("bogus"), ntt, None), Some(selection)),
        ]
    }

    fn variant_of(r: Result<(Selection, BackendOptions)>) -> Option<String> {
        r.unwrap().1.ntt_variant
    }

    #[test]
    fn one_normalisation_for_every_variant_name() {
        assert_eq!(normalise_variant(" HARVEY\t").as_deref(), Some("harvey"));
        assert_eq!(normalise_variant("  "), None);
        assert_eq!(parse_selection(Some(" CPU : Harvey ")).unwrap().1.as_deref(), Some("harvey"));
        // LUX_FHE_NTT=HARVEY is the same variant as cpu:harvey.
        for r in both("cpu", Some(" HARVEY ")) {
            assert_eq!(variant_of(r).as_deref(), Some("harvey"));
        }
    }

    /// README.md "Choosing a backend", the precedence table, row by row; each row
    /// through `from_env`'s path and `with_backend`'s.
    #[test]
    fn precedence_table_rows() {
        // LUX_FHE_BACKEND: from_env's selection; with_backend does not read it at all,
        // not even to check it is UTF-8.
        assert_eq!(resolve(&vars(Some("cpu"), None, None), None).unwrap().0, Selection::Require(BackendKind::Cpu));
        let bad = EnvVars { backend: Some(non_utf8()), ..EnvVars::default() };
        assert_eq!(resolve(&bad, Some("cpu")).unwrap().0, Selection::Require(BackendKind::Cpu));
        assert_eq!(resolve(&vars(Some("cpu"), None, None), Some("auto")).unwrap().0, Selection::Auto);
        // No variant in the selection, LUX_FHE_NTT unset or blank: the backend's default.
        for sel in ["cpu", "auto", ""] {
            for ntt in [None, Some(""), Some("  ")] {
                for r in both(sel, ntt) {
                    assert_eq!(variant_of(r), None, "{sel:?} {ntt:?}");
                }
            }
        }
        assert_eq!(variant_of(resolve(&EnvVars::default(), None)), None);
        // No variant in the selection, LUX_FHE_NTT=w: w (validated by the backend).
        for sel in ["cpu", "auto"] {
            for r in both(sel, Some("reference")) {
                assert_eq!(variant_of(r).as_deref(), Some("reference"));
            }
            for r in both(sel, Some("bogus-ntt")) {
                assert_eq!(variant_of(r).as_deref(), Some("bogus-ntt"));
            }
        }
        // The selection names v, LUX_FHE_NTT unset or blank: v.
        for ntt in [None, Some(""), Some(" ")] {
            for r in both("cpu:harvey", ntt) {
                assert_eq!(variant_of(r).as_deref(), Some("harvey"));
            }
        }
        // The selection names v, LUX_FHE_NTT is v up to case and whitespace: v.
        for r in both("cpu:Harvey", Some(" HARVEY ")) {
            assert_eq!(variant_of(r).as_deref(), Some("harvey"));
        }
        // The selection names v, LUX_FHE_NTT names another variant, valid or not:
        // an error naming LUX_FHE_NTT, its value, and where v came from.
        for other in ["reference", "bogus-ntt"] {
            let [env, explicit, explicit_junk] = both("cpu:harvey", Some(other));
            for (e, source) in [
                (env, "LUX_FHE_BACKEND=`cpu:harvey`"),
                (explicit, "Engine::with_backend(\"cpu:harvey\")"),
                (explicit_junk, "Engine::with_backend(\"cpu:harvey\")"),
            ] {
                let e = e.unwrap_err();
                assert!(
                    matches!(&e, Error::Environment { variable: "LUX_FHE_NTT", value, .. } if value == other),
                    "{e:?}"
                );
                let msg = e.to_string();
                assert!(msg.contains("LUX_FHE_NTT") && msg.contains(other) && msg.contains(source), "{msg}");
            }
        }
        // LUX_FHE_DEVICE: read by both; unset or blank is 0.
        assert_eq!(resolve(&vars(Some("cpu"), None, None), None).unwrap().1.device, 0);
        assert_eq!(resolve(&vars(Some("cpu"), None, Some(" 2 ")), None).unwrap().1.device, 2);
        assert_eq!(resolve(&vars(None, None, Some("2")), Some("cpu")).unwrap().1.device, 2);
        for explicit in [None, Some("cpu")] {
            let e = resolve(&vars(Some("cpu"), None, Some("first")), explicit).unwrap_err();
            assert!(matches!(e, Error::Environment { variable: "LUX_FHE_DEVICE", .. }), "{e:?}");
        }
        // A value that is not UTF-8: an error naming the variable (never "unset"), for
        // every variable each entry point reads. LUX_FHE_BOOTSTRAP_THREADS: fhe-cpu's
        // `bootstrap_threads_raw_values`.
        let cases: [(EnvVars, &str); 3] = [
            (EnvVars { backend: Some(non_utf8()), ..EnvVars::default() }, "LUX_FHE_BACKEND"),
            (EnvVars { ntt: Some(non_utf8()), ..EnvVars::default() }, "LUX_FHE_NTT"),
            (EnvVars { device: Some(non_utf8()), ..EnvVars::default() }, "LUX_FHE_DEVICE"),
        ];
        for (env, var) in cases {
            let mut results = vec![resolve(&env, None)];
            if var != "LUX_FHE_BACKEND" {
                results.push(resolve(&env, Some("cpu")));
            }
            for r in results {
                let e = r.unwrap_err();
                assert!(
                    matches!(&e, Error::Environment { variable, value, .. } if *variable == var && value.contains('\u{fffd}')),
                    "{var}: {e:?}"
                );
                assert!(e.to_string().contains("UTF-8"), "{e}");
            }
        }
    }

    /// `cu\xffda`: not UTF-8 (on Unix; elsewhere an unpaired surrogate).
    fn non_utf8() -> OsString {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            OsString::from_vec(b"cu\xffda".to_vec())
        }
        #[cfg(windows)]
        {
            use std::os::windows::ffi::OsStringExt;
            OsString::from_wide(&[0x63, 0x75, 0xD800, 0x64, 0x61])
        }
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
