#!/usr/bin/env bash
# Builds the release test binaries, benches, examples and the CLI here and
# copies them into .gpu/ — tests to .gpu/tests/, everything else to
# .gpu/bin/ (without cargo's hash suffix) — for a GPU machine that has no
# Rust toolchain. Carry the working tree with .gpu/ to that machine and run
# `bash scripts/gpu-validate.sh` there (every test binary under its own time
# limit, GPU tests required), or a bench from .gpu/bin/.
#
#   bash scripts/gpu-stage.sh [cargo args, e.g. --features fault-injection,mpi]
#   bash scripts/gpu-trim.sh      # optional: drops the CPU-only tests
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
rm -rf .gpu && mkdir -p .gpu/bin .gpu/tests
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo build --release --workspace --all-targets "$@" --message-format=json-render-diagnostics > "$log"
cargo test --release --workspace --no-run "$@" --message-format=json-render-diagnostics >> "$log"
python3 - "$log" <<'PY'
import json, os, shutil, sys
seen = set()
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    exe = m.get("executable") if m.get("reason") == "compiler-artifact" else None
    if not exe or exe in seen:
        continue
    seen.add(exe)
    kinds = m.get("target", {}).get("kind", [])
    is_test = m.get("profile", {}).get("test", False) and "bench" not in kinds
    name = os.path.basename(exe)
    stem, _, suffix = name.rpartition("-")
    if not is_test and stem and len(suffix) == 16 and suffix.isalnum():
        name = stem  # benches: cargo's hash suffix off
    shutil.copy2(exe, os.path.join(".gpu/tests" if is_test else ".gpu/bin", name))
PY
strip .gpu/bin/* .gpu/tests/* 2>/dev/null || true
du -sh .gpu
