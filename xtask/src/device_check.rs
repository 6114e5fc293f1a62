//! `cargo xtask device-check`: packs what a GPU machine without a Rust toolchain needs
//! to run the equivalence gate and then the benches: this x86-64 release binary (with
//! the `cuda` and `hip` backends), the `fhe-cuda` test binary (the conformance suite,
//! run with `--ignored` on the device, every GPU NTT variant against the oracle
//! included), the KAT corpus, and `run.sh` (`xtask/device/run.sh`: the gate, the
//! conformance suites, the benches, then seed 1's NTT screening of the CUDA variants,
//! `recommend ntt --device cuda:0`, kernel and ckks-primitive suites).

use std::path::{Path, PathBuf};

use clap::Args;

use crate::bench::workspace_root;
use crate::Fail;

const RUN_SH: &str = include_str!("../device/run.sh");

#[derive(Args)]
pub struct DeviceCheckArgs {
    /// The bundle folder (relative paths are below the workspace root).
    #[arg(long, default_value = "target/device-check")]
    dir: PathBuf,
}

fn io(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> Fail {
    let what = format!("{what} {}", path.display());
    move |e| Fail::Failed(format!("{what}: {e}"))
}

pub fn run(a: DeviceCheckArgs) -> Result<(), Fail> {
    if !cfg!(feature = "cuda") {
        return Err(Fail::Usage("device-check needs the cuda feature (on by default in xtask)".into()));
    }
    let exe = std::env::current_exe().map_err(|e| Fail::Failed(format!("current executable: {e}")))?;
    if !exe.components().any(|c| c.as_os_str() == "release") {
        return Err(Fail::Usage("build the bundle from a release binary: `cargo xtask device-check`".into()));
    }
    let root = workspace_root();
    let dir = if a.dir.is_relative() { root.join(&a.dir) } else { a.dir.clone() };
    let bin = dir.join("bin");
    let corpus_out = dir.join("corpus");
    std::fs::create_dir_all(&bin).map_err(io("create", &bin))?;
    std::fs::create_dir_all(&corpus_out).map_err(io("create", &corpus_out))?;

    let target = bin.join("xtask");
    std::fs::copy(&exe, &target).map_err(io("copy the binary to", &target))?;
    strip(&target);
    let tests = bin.join("fhe-cuda-tests");
    std::fs::copy(cuda_test_binary(&root)?, &tests).map_err(io("copy the test binary to", &tests))?;
    strip(&tests);
    let corpus = fhe_kat::corpus_dir();
    for entry in std::fs::read_dir(&corpus).map_err(io("read", &corpus))? {
        let path = entry.map_err(io("read", &corpus))?.path();
        if path.extension().is_some_and(|e| e == "json") {
            let to = corpus_out.join(path.file_name().expect("a file"));
            std::fs::copy(&path, &to).map_err(io("copy", &path))?;
        }
    }
    let script = dir.join("run.sh");
    std::fs::write(&script, RUN_SH).map_err(io("write", &script))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).map_err(io("chmod", &script))?;
    }
    let size: u64 = [&target, &tests, &script].iter().filter_map(|p| p.metadata().ok()).map(|m| m.len()).sum();
    let rel = dir.strip_prefix(&root).unwrap_or(&dir).display().to_string();
    println!("device-check bundle in {} ({:.1} MiB)", dir.display(), size as f64 / (1 << 20) as f64);
    println!("on the GPU machine, from the repository root:  bash {rel}/run.sh OUT_DIR [SEEDS]");
    println!("(with the device tool: carry [\"{rel}\"], command `bash {rel}/run.sh $OUT 10`)");
    Ok(())
}

/// Debug info is most of a binary, and the bundle travels under a size limit.
fn strip(path: &Path) {
    match std::process::Command::new("strip").arg("--strip-debug").arg(path).status() {
        Ok(s) if s.success() => {}
        other => tracing::warn!(?other, path = %path.display(), "strip failed: the bundle keeps the debug info"),
    }
}

/// Builds the `fhe-cuda` unit tests (release) and returns the test executable: on the
/// device, `--ignored` runs the shared conformance suite on CUDA.
fn cuda_test_binary(root: &Path) -> Result<PathBuf, Fail> {
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["test", "--release", "-p", "fhe-cuda", "--lib", "--no-run", "--message-format=json"])
        .output()
        .map_err(|e| Fail::Failed(format!("cargo test --no-run: {e}")))?;
    if !out.status.success() {
        return Err(Fail::Failed(format!(
            "building the fhe-cuda tests failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["target"]["name"] == "fhe_cuda" && m["profile"]["test"] == true)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| Fail::Failed("cargo reported no fhe-cuda test executable".into()))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::RUN_SH;
    use crate::{Cli, Cmd};

    /// The prepared script screens the CUDA NTT variants with both suites, and each of
    /// its `recommend` lines is a command this binary accepts (variables given values).
    #[test]
    fn the_script_screens_the_cuda_variants() {
        let joined = RUN_SH.replace("\\\n", " ");
        let lines: Vec<&str> = joined.lines().filter(|l| l.contains("\"$x\" recommend ntt")).collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        for suite in ["--suite kernel", "--suite ckks-primitive"] {
            assert!(lines.iter().any(|l| l.contains(suite) && l.contains("--device cuda:0")), "{suite}");
        }
        for line in lines {
            let cmd = line[line.find("recommend ntt").expect("recommend ntt")..]
                .split("||")
                .next()
                .expect("a command")
                .replace("\"$preset\"", "slots32768-scale40-depth34")
                .replace("$preset", "slots32768-scale40-depth34")
                .replace("\"$out", "\"/tmp/out");
            let args = std::iter::once("xtask".to_string())
                .chain(cmd.split_whitespace().map(|w| w.trim_matches('"').to_string()));
            let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{cmd}: {e}"));
            assert!(matches!(cli.cmd, Cmd::Recommend(_)), "{cmd}");
        }
    }
}
