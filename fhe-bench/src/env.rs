//! The environment identity every result file carries.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use fhe_api::{Backend, BackendKind};
use serde::{Deserialize, Serialize};

/// x86 SIMD features relevant to the CPU NTT variants (all false on other targets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
pub struct Environment {
    pub cpu_model: String,
    /// Vendor, family, model and stepping (`GenuineIntel family 6 model 207 stepping 2`)
    /// from `/proc/cpuinfo`: two cloud instances with the same `cpu_model` string can be
    /// different cores. Absent where unknown, and from reports made before 2026-12-05.
    #[serde(default)]
    pub cpu_id: Option<String>,
    /// The caches the first CPU sees (`L1d 48K, L1i 32K, L2 2048K, L3 307200K (shared by
    /// 0-1)`) from Linux sysfs. Absent where unknown, and from reports made before
    /// 2026-12-05.
    #[serde(default)]
    pub cpu_caches: Option<String>,
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
    /// Always written, null without a GPU: a file that leaves it out is malformed
    /// (`Option::deserialize` makes the field required but nullable).
    #[serde(deserialize_with = "Option::deserialize")]
    pub gpu_name: Option<String>,
    /// GPU driver or runtime version, where the backend reports one (always written).
    #[serde(deserialize_with = "Option::deserialize")]
    pub gpu_driver: Option<String>,
    /// Version of the fhe-bench crate.
    pub crate_version: String,
    /// `git rev-parse HEAD` at run time, or "unknown".
    pub git_commit: String,
    /// Whether tracked files differed from `git_commit` at run time
    /// (`git status --porcelain --untracked-files=no`): the numbers then come from code
    /// that no commit holds. Absent where git could not tell, and from reports made
    /// before 2026-12-05.
    #[serde(default)]
    pub git_dirty: Option<bool>,
    /// When the report was made: UTC, RFC 3339 (`2026-12-02T16:55:04Z`).
    pub date_utc: String,
}

impl Environment {
    /// The environment of this process, with the GPU identity of `backend` when it is
    /// a device backend (`None` for the CPU backend, or with no backend).
    pub fn capture(backend: Option<&dyn Backend>) -> Environment {
        Environment::capture_in(backend, Path::new("."))
    }

    /// The machine in one phrase, for table headers: the GPU's name, else the CPU's
    /// model with its [`Environment::cpu_id`] where known.
    pub fn machine(&self) -> String {
        match (&self.gpu_name, &self.cpu_id) {
            (Some(gpu), _) => gpu.clone(),
            (None, Some(id)) => format!("{}, {id}", self.cpu_model),
            (None, None) => self.cpu_model.clone(),
        }
    }

    /// The commit for table headers: its first 12 digits, with `+changes` when tracked
    /// files differed from it ([`Environment::git_dirty`]).
    pub fn commit_label(&self) -> String {
        let short = &self.git_commit[..self.git_commit.len().min(12)];
        if self.git_dirty == Some(true) {
            format!("{short}+changes")
        } else {
            short.to_string()
        }
    }

    /// [`Environment::capture`] with `git` run in `repo`.
    pub fn capture_in(backend: Option<&dyn Backend>, repo: &Path) -> Environment {
        let device = backend.filter(|b| b.kind() != BackendKind::Cpu).map(|b| b.device_info());
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        Environment {
            cpu_model: fhe_cpu::cpu_model(),
            cpu_id: std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| cpu_id(&s)),
            cpu_caches: cpu_caches(Path::new("/sys/devices/system/cpu/cpu0/cache")),
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
            git_dirty: git_dirty(repo),
            date_utc: rfc3339_utc(SystemTime::now()),
        }
    }
}

/// `<vendor_id> family <f> model <m> stepping <s>` from the first processor of a
/// `/proc/cpuinfo` text; `None` if a field is missing (not x86, not Linux).
fn cpu_id(cpuinfo: &str) -> Option<String> {
    let first = cpuinfo.split("\n\n").next()?;
    let field = |name: &str| {
        first.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_string())
        })
    };
    Some(format!(
        "{} family {} model {} stepping {}",
        field("vendor_id")?,
        field("cpu family")?,
        field("model")?,
        field("stepping")?
    ))
}

/// The caches under `dir` (`/sys/devices/system/cpu/cpu0/cache`): `L<level><d|i|>
/// <size>` each, in index order, with the CPUs sharing it where that is more than one.
/// `None` when there is no such directory or nothing readable in it.
fn cpu_caches(dir: &Path) -> Option<String> {
    let mut caches = Vec::new();
    for index in 0.. {
        let at = dir.join(format!("index{index}"));
        let read = |f: &str| std::fs::read_to_string(at.join(f)).ok().map(|s| s.trim().to_string());
        let (Some(level), Some(size)) = (read("level"), read("size")) else { break };
        let kind = match read("type").as_deref() {
            Some("Data") => "d",
            Some("Instruction") => "i",
            _ => "",
        };
        let shared = read("shared_cpu_list").filter(|l| l.contains(['-', ',']));
        caches.push(match shared {
            Some(cpus) => format!("L{level}{kind} {size} (shared by {cpus})"),
            None => format!("L{level}{kind} {size}"),
        });
    }
    (!caches.is_empty()).then(|| caches.join(", "))
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

/// Whether tracked files in `repo` differ from `HEAD`; `None` where git cannot tell.
pub fn git_dirty(repo: &Path) -> Option<bool> {
    Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| !o.stdout.is_empty())
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
    fn cpu_id_reads_the_first_processor() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 207\n\
                    model name\t: Intel(R) Xeon(R) Processor\nstepping\t: 2\n\n\
                    processor\t: 1\nvendor_id\t: Other\ncpu family\t: 7\nmodel\t\t: 1\nstepping\t: 0\n";
        assert_eq!(cpu_id(text).as_deref(), Some("GenuineIntel family 6 model 207 stepping 2"));
        assert_eq!(cpu_id("processor\t: 0\nvendor_id\t: GenuineIntel\n"), None, "fields missing: unknown");
        assert_eq!(cpu_id(""), None);
    }

    #[test]
    fn cpu_caches_reads_sysfs_in_index_order() {
        let dir = tempfile::tempdir().unwrap();
        let caches = [
            ("1", "Data", "48K", "0"),
            ("1", "Instruction", "32K", "0"),
            ("2", "Unified", "2048K", "0"),
            ("3", "Unified", "307200K", "0-1"),
        ];
        for (i, (level, kind, size, shared)) in caches.iter().enumerate() {
            let at = dir.path().join(format!("index{i}"));
            std::fs::create_dir(&at).unwrap();
            for (f, v) in [("level", level), ("type", kind), ("size", size), ("shared_cpu_list", shared)] {
                std::fs::write(at.join(f), format!("{v}\n")).unwrap();
            }
        }
        assert_eq!(cpu_caches(dir.path()).as_deref(), Some("L1d 48K, L1i 32K, L2 2048K, L3 307200K (shared by 0-1)"));
        assert_eq!(cpu_caches(&dir.path().join("missing")), None);
    }

    #[test]
    fn git_dirty_sees_a_changed_tracked_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok =
                Command::new("git").arg("-C").arg(dir.path()).args(args).output().is_ok_and(|o| o.status.success());
            assert!(ok, "git {args:?}");
        };
        assert_eq!(git_dirty(dir.path()), None, "not a repository");
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("a.txt"), "one").unwrap();
        git(&["add", "a.txt"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one"]);
        assert_eq!(git_dirty(dir.path()), Some(false));
        std::fs::write(dir.path().join("new.json"), "{}").unwrap();
        assert_eq!(git_dirty(dir.path()), Some(false), "an untracked result file is not a change to the code");
        std::fs::write(dir.path().join("a.txt"), "two").unwrap();
        assert_eq!(git_dirty(dir.path()), Some(true));
        let mut env = Environment::capture_in(None, dir.path());
        assert_eq!(env.git_dirty, Some(true));
        assert!(env.commit_label().ends_with("+changes"));
        env.git_dirty = Some(false);
        assert_eq!(env.commit_label(), &env.git_commit[..12]);
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
