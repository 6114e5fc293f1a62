//! Memory of the measuring process and of the machine, for the bootstrap comparison
//! (`ckks_boot`): at N = 2^16 each side holds about 10 GB, on machines of 24.

use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
pub fn mem_available(meminfo: &str) -> Option<u64> {
    kib_field(meminfo, "MemAvailable:")
}

/// A `<key> <n> kB` line of a `/proc` file, in bytes.
pub fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let mut it = line[key.len()..].split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    match it.next() {
        Some("kB") => Some(n * 1024),
        _ => None,
    }
}

/// Peak resident set of this process (`VmHWM`), bytes; `None` off Linux.
pub fn peak_rss() -> Option<u64> {
    kib_field(&std::fs::read_to_string("/proc/self/status").ok()?, "VmHWM:")
}

/// Logs the resident set and its peak after a step of a round (target
/// `lux_fhe::memory`, level info: `RUST_LOG=lux_fhe::memory=info` prints where a peak
/// goes, step by step). Nothing off Linux.
pub fn log_step(step: &str) {
    // The status file is read only when someone listens.
    if !tracing::enabled!(target: "lux_fhe::memory", tracing::Level::INFO) {
        return;
    }
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return };
    let gib = |key| kib_field(&status, key).map(|b| b as f64 / (1u64 << 30) as f64);
    if let (Some(rss), Some(peak)) = (gib("VmRSS:"), gib("VmHWM:")) {
        tracing::info!(target: "lux_fhe::memory", step, rss_gib = format!("{rss:.2}"), peak_gib = format!("{peak:.2}"));
    }
}

/// Resets `VmHWM` to the current resident set (Linux >= 4.0: `5` to
/// `/proc/self/clear_refs`), so the next [`peak_rss`] is this round's; false where that
/// is refused (the peak is then the process's since it started).
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Starts a round's peak: the heap earlier work freed (the equivalence gate's, the
/// previous round's) goes back to the system, then `VmHWM` is reset ([`reset_peak_rss`]).
pub fn start_round_peak() -> bool {
    release_freed_memory();
    reset_peak_rss()
}

/// Hands the heap freed by a round back to the system (glibc keeps it otherwise, and the
/// peer's round that follows needs it).
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's arenas to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Waits until the machine has `need` bytes available (polling every 10 s, at most
/// `max_wait`), so that a round does not start while the other side's memory, or another
/// user's, is still held. `need == 0` or no `/proc/meminfo`: no check.
pub fn wait_for_memory(need: u64, max_wait: Duration) -> Result<()> {
    if need == 0 {
        return Ok(());
    }
    let start = Instant::now();
    loop {
        let Some(avail) = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| mem_available(&m)) else {
            return Ok(());
        };
        if avail >= need {
            return Ok(());
        }
        if start.elapsed() >= max_wait {
            return Err(Error::InvalidInput(format!(
                "only {:.1} GiB of memory available after waiting {} s; a bootstrap round needs {:.1} GiB \
                 (free memory, or lower --ckks-boot-min-free-gib at your own risk)",
                avail as f64 / (1u64 << 30) as f64,
                max_wait.as_secs(),
                need as f64 / (1u64 << 30) as f64
            )));
        }
        tracing::warn!(available = avail, need, "waiting for memory before a bootstrap round");
        std::thread::sleep(Duration::from_secs(10).min(max_wait));
    }
}
