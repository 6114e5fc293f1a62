//! The environment identity every result file carries.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use fhe_api::{Backend, BackendKind};
use serde::{Deserialize, Serialize};

/// x86 SIMD features relevant to the CPU NTT variants (all false on other targets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFeatures {
    pub avx2: bool,
    pub avx512f: bool,
    pub avx512ifma: bool,
}

impl CpuFeatures {
    /// What this CPU supports, by run-time detection.
    pub fn detect() -> CpuFeatures {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            CpuFeatures {
                avx2: std::arch::is_x86_feature_detected!("avx2"),
                avx512f: std::arch::is_x86_feature_detected!("avx512f"),
                avx512ifma: std::arch::is_x86_feature_detected!("avx512ifma"),
            }
        }
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        {
            CpuFeatures::default()
        }
    }
}

/// The identity of the machine, toolchain and code that produced a result file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub cpu_model: String,
    pub cpu_features: CpuFeatures,
    /// Logical cores available to this process.
    pub cores: usize,
    /// Threads the CPU backend gives a lone ciphertext's blind rotation
    /// (`LUX_FHE_BOOTSTRAP_THREADS`, default 2; one where the process has one core);
    /// absent from reports made before it was recorded.
    #[serde(default)]
    pub bootstrap_threads: Option<usize>,
    /// `std::env::consts::OS` plus the distribution and kernel where known, e.g.
    /// `linux (Debian GNU/Linux 13, kernel 6.8.0)`.
    pub os: String,
    /// `std::env::consts::ARCH`.
    pub arch: String,
    /// `rustc --version` of the compiler that built fhe-bench.
    pub rustc_version: String,
    /// GPU name, when the measured backend reports a device (not the CPU backend).
    pub gpu_name: Option<String>,
    /// GPU driver or runtime version, where the backend reports one.
    pub gpu_driver: Option<String>,
    /// Version of the fhe-bench crate.
    pub crate_version: String,
    /// `git rev-parse HEAD` at run time, or "unknown".
    pub git_commit: String,
    /// When the report was made: UTC, RFC 3339 (`2026-12-02T16:55:04Z`).
    pub date_utc: String,
}

impl Environment {
    /// The environment of this process, with the GPU identity of `backend` when it is
    /// a device backend (`None` for the CPU backend, or with no backend).
    pub fn capture(backend: Option<&dyn Backend>) -> Environment {
        Environment::capture_in(backend, Path::new("."))
    }

    /// [`Environment::capture`] with `git` run in `repo`.
    pub fn capture_in(backend: Option<&dyn Backend>, repo: &Path) -> Environment {
        let device = backend.filter(|b| b.kind() != BackendKind::Cpu).map(|b| b.device_info());
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        Environment {
            cpu_model: fhe_cpu::cpu_model(),
            cpu_features: CpuFeatures::detect(),
            cores,
            bootstrap_threads: Some(match fhe_cpu::BootstrapThreads::from_env() {
                Ok(fhe_cpu::BootstrapThreads::Two) if cores >= 2 => 2,
                _ => 1,
            }),
            os: os_description(),
            arch: std::env::consts::ARCH.to_string(),
            rustc_version: env!("FHE_BENCH_RUSTC_VERSION").to_string(),
            gpu_name: device.as_ref().map(|d| d.name.clone()),
            gpu_driver: device.and_then(|d| d.driver),
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: git_commit(repo),
            date_utc: rfc3339_utc(SystemTime::now()),
        }
    }
}

fn os_description() -> String {
    let mut parts = Vec::new();
    if let Ok(release) = std::fs::read_to_string("/etc/os-release") {
        if let Some(name) = release.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")) {
            parts.push(name.trim_matches('"').to_string());
        }
    }
    if let Ok(kernel) = std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        parts.push(format!("kernel {}", kernel.trim()));
    }
    if parts.is_empty() {
        std::env::consts::OS.to_string()
    } else {
        format!("{} ({})", std::env::consts::OS, parts.join(", "))
    }
}

/// `git rev-parse HEAD` in `repo`, or "unknown".
pub fn git_commit(repo: &Path) -> String {
    Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// `(year, month, day, hour, minute, second)` in UTC of a time after the epoch.
fn civil_utc(t: SystemTime) -> (i64, u32, u32, u32, u32, u32) {
    let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day, (rem / 3600) as u32, (rem % 3600 / 60) as u32, (rem % 60) as u32)
}

/// RFC 3339 UTC with second precision: `2026-12-02T16:55:04Z`.
pub fn rfc3339_utc(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil_utc(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// The compact form used in result file names: `20261202T165504Z`.
pub fn file_timestamp(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil_utc(t);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_format_as_rfc3339() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29T12:34:56Z (a leap day) = 951827696.
        assert_eq!(rfc3339_utc(UNIX_EPOCH + Duration::from_secs(951_827_696)), "2000-02-29T12:34:56Z");
        // 2026-12-02T16:55:04Z = 1796230504.
        let t = UNIX_EPOCH + Duration::from_secs(1_796_230_504);
        assert_eq!(rfc3339_utc(t), "2026-12-02T16:55:04Z");
        assert_eq!(file_timestamp(t), "20261202T165504Z");
    }

    #[test]
    fn capture_fills_every_field() {
        let env = Environment::capture(None);
        assert!(env.cores >= 1);
        assert!(!env.rustc_version.is_empty());
        assert!(!env.git_commit.is_empty());
        assert!(env.gpu_name.is_none());
        assert!(env.date_utc.ends_with('Z'));
    }
}
