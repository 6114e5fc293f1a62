#!/usr/bin/env bash
# Lux FHE device check, for a machine with an NVIDIA GPU and no Rust toolchain.
# Built by `cargo xtask device-check` (x86-64 release binary + KAT corpus + this script).
#
#   run.sh OUT_DIR [SEEDS]
#
# 1. The equivalence gate first, CUDA against the CPU oracle: KAT replay (bit scheme,
#    CKKS and the CKKS bootstrap: CUDA declares CKKS, so every corpus runs), then
#    `equiv dispatch` and `equiv sweep` with SEEDS seeds per parameter set and CKKS
#    preset (default 1000, the full gate; a short device lease fits about 10, see README).
# 2. Only if every step of the gate passed: the shared conformance suites on CUDA, bit
#    scheme and CKKS, and device memory (the fhe-cuda test binary, `--ignored`: free and
#    total from cuMemGetInfo, a request past the device refused as Error::OutOfMemory),
#    the computed memory per CKKS preset (`bench memory`), then the CUDA benches (single and batched
#    bootstrap, NTT batches of 1 and 1024, every gate) and the CPU benches of the same
#    machine, as JSON under OUT_DIR/<lane>/, plus a log and a summary.
# 3. Then seed 1's NTT screening of the CUDA variants (every variant but the diagnostic
#    radix2_indexed; the conformance step already checked all six against the oracle):
#    `recommend ntt --suite kernel` (PN11QP54) and `--suite ckks-primitive` at
#    RECOMMEND_PRESET (default slots32768-scale40-depth34, seed 1's), 3 repetitions,
#    reports under OUT_DIR/recommend/. RECOMMEND_PRESET=none skips the CKKS screening
#    on a short lease (its keys and oracle checks at N = 2^16 take minutes on the host).
# Exit code: 0 all passed, 1 the gate or a bench failed, 3 CUDA unavailable.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: run.sh OUT_DIR [SEEDS]}"
seeds="${2:-1000}"
mkdir -p "$out"
exec > >(tee -a "$out/device-check.log") 2>&1

# libcuda comes with the driver; libnvrtc from a CUDA toolkit or an nvidia-cuda-nvrtc
# wheel (12.x or 13.x): expose it under the unversioned name cudarc also tries.
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64; do
  [ -d "$d" ] && LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}${LD_LIBRARY_PATH:+:}$d"
done
nvrtc="$(find /usr/local /opt /usr/lib /root -name 'libnvrtc.so*' ! -name '*builtins*' ! -name '*alt*' 2>/dev/null | sort | tail -n1)"
if [ -n "$nvrtc" ]; then
  shim="$(mktemp -d)"
  ln -s "$nvrtc" "$shim/libnvrtc.so"
  LD_LIBRARY_PATH="$shim:$(dirname "$nvrtc"):${LD_LIBRARY_PATH:-}"
fi
export LD_LIBRARY_PATH
echo "libnvrtc: ${nvrtc:-not found}"

x="$here/bin/xtask"
corpus="$here/corpus"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
lane="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')"
lane="${lane:-cuda}"
"$x" list-backends

summary="$out/summary.txt"
step() {
  local name="$1"; shift
  echo "== $name: $*"
  local start; start=$(date +%s)
  "$@"; local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - start ))s" | tee -a "$summary"
  return $rc
}

step kat "$x" kat replay --backend cuda --corpus "$corpus"; rc=$?
if [ $rc -eq 3 ]; then echo "CUDA unavailable here: nothing measured"; exit 3; fi
gate=$rc
step dispatch "$x" equiv dispatch --backend cuda --seeds "$seeds" || gate=1
step sweep "$x" equiv sweep --backend cuda --seeds "$seeds" --corpus "$corpus" || gate=1
if [ "$gate" -ne 0 ]; then
  echo "equivalence gate FAILED: no benches reported"
  exit 1
fi
fail=0
step conformance "$here/bin/fhe-cuda-tests" --ignored --test-threads 1 || fail=1
step memory "$x" bench memory --out "$out/ckks-device-memory.md" || fail=1
step bench-cuda "$x" bench --backend cuda --params PN10QP27 --params PN11QP54 --ntt-batch 1 --ntt-batch 1024 \
  --bootstrap-batch 4096 --results-dir "$out" --lane "$lane" || fail=1
step bench-cpu "$x" bench --backend cpu --params PN10QP27 --results-dir "$out" --lane "$lane-host-cpu" || fail=1
step recommend-kernel "$x" recommend ntt --suite kernel --params PN11QP54 --device cuda:0 \
  --output "$out/recommend/ntt-kernel-pn11qp54.json" || fail=1
preset="${RECOMMEND_PRESET:-slots32768-scale40-depth34}"
if [ "$preset" != none ]; then
  step recommend-ckks "$x" recommend ntt --suite ckks-primitive --preset "$preset" --device cuda:0 \
    --output "$out/recommend/ntt-ckks-primitive-$preset.json" || fail=1
fi
exit $fail
