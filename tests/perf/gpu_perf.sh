#!/usr/bin/env bash
# GPU-node supply benchmarks (run by hand on a GPU node; docs/loader.md, "GPU nodes"). Every figure
# is a ratio measured in the same run, median of REPS runs with min and max.
#
#   ceiling  pinned host-to-device copy bandwidth (PyTorch, pinned copy_, 32/64/128 MiB): the H2D
#            ceiling of this node, to which GPU delivery is compared
#   supply   ingot-bench with no compute step, page cache hot: MiB/s delivered into host memory and
#            into GPU memory, at 1 and NP ranks (the ranks share the node's GPUs), for 110 KiB and
#            1 MiB samples, verify on and off, with the default threads and with the best of a
#            readers x workers sweep (verify off, GPU memory). Ratios:
#              GPU / host at NP ranks, same threads                          goal >= 0.9
#              default threads / best swept threads, 1 and NP ranks          goal >= 0.9
#              GPU delivery and the H2D stage (batch bytes / h2d p50, summed over the ranks) /
#              the pinned ceiling
#   au       AU with --compute-gpu (a busy kernel on a stream waiting for each batch's ready
#            event), 1 and NP ranks
# Where no CUDA device is usable every GPU row says so and only the host rows are measured (so the
# script itself can be checked on a CPU-only machine).
# usage: tests/perf/gpu_perf.sh BUILD_DIR [WORK_DIR] [section...]
#        env: REPS (3), NP (4), SWEEP ("2 4 8": readers and workers per rank tried),
#             DATA_MIB (2048: the size of each dataset)
set -euo pipefail
build=$(realpath "$1"); work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/ingot-gpu-perf.XXXXXX")}
shift $(( $# >= 2 ? 2 : 1 )); sections=${*:-"ceiling supply au"}
REPS=${REPS:-3}; NP=${NP:-4}; SWEEP=${SWEEP:-"2 4 8"}; DATA_MIB=${DATA_MIB:-2048}
bench=$build/apps/ingot-bench; info=$build/apps/ingot-info
here=$(cd "$(dirname "$0")" && pwd)
. "$here/perf_lib.sh"
mkdir -p "$work"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

gpus=$("$info" | sed -n 's/^#   CUDA devices: *\([0-9]*\).*/\1/p'); gpus=${gpus:-0}
no_gpu_reason=$("$info" | sed -n 's/^#   CUDA devices: *//p')
ceiling_mibs=""

awaits() { printf '| %-52s | %s |\n' "$1" "awaits a GPU (CUDA devices: $no_gpu_reason)"; }
run_bench() { # run_bench NP JSON ARGS...: ingot-bench on NP ranks of this node, 2 epochs
  local np=$1 out=$2; shift 2
  mpiexec --oversubscribe -np "$np" "$bench" --no-progress --epochs 2 "$@" --json="$out" >/dev/null
}
data() { # data SIZE: a dataset of about DATA_MIB of SIZE samples, page cache hot
  local size=$1 n=$((DATA_MIB * 1024 / 110)); [ "$size" = 1MiB ] && n=$DATA_MIB
  local d=$work/d$size
  [ -f "$d/manifest.ingot" ] || "$bench" --no-progress --generate "$d" --samples $n \
      --sample-size "$size" --shard-size 256MiB --steps 1 --batch 1 >/dev/null
  cat "$d"/shard-*.tar >/dev/null
  echo "$d/manifest.ingot"
}
enough_steps() { # enough_steps SAMPLES GLOBAL_BATCH: refuse a run too short to measure
  if [ $(( $1 / $2 * 2 )) -lt 16 ]; then
    echo "gpu_perf.sh: $1 samples make $(( $1 / $2 * 2 )) steps of $2 over 2 epochs; raise DATA_MIB" >&2
    exit 2
  fi
}
mibs() { json "$1" "['aggregate']['mib_per_s']"; }
# The H2D stage's rate: each rank's bytes per batch over its h2d p50, summed over the ranks.
h2d_mibs() {
  $py - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(r["bytes"] / r["steps"] / (r["h2d_p50_ms"] / 1e3) / 1048576
          for r in d["per_rank"] if r["steps"] and r["h2d_p50_ms"] > 0))
PY
}

header() {
  echo "# GPU-node benchmarks, $(date -u +%F), $(uname -n), $(nproc) cores, $gpus GPU(s), REPS=$REPS, NP=$NP"
  "$info" | grep -E '^#   (CUDA|NCCL)' || true
  echo "| measurement | median | min | max | unit |"
  echo "|---|---|---|---|---|"
}

sec_ceiling() {
  if [ "$gpus" = 0 ]; then awaits "pinned H2D copy ceiling (PyTorch copy_)"; return; fi
  local v=()
  for i in $(seq "$REPS"); do
    v+=("$($py - <<'PY'
import time, torch
best = 0.0
for mib in (32, 64, 128):
    src = torch.empty(mib << 20, dtype=torch.uint8).pin_memory()
    dst = torch.empty(mib << 20, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(10):
        dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    best = max(best, 10 * mib / (time.perf_counter() - t))
print(best)
PY
)")
  done
  ceiling_mibs=$(stats "${v[@]}" | cut -d' ' -f1)
  row "pinned H2D copy ceiling (PyTorch copy_, best size)" MiB/s "${v[@]}"
}

sec_supply() {
  for size in 110KiB 1MiB; do
    local m; m=$(data "$size")
    local batch=64 n=$((DATA_MIB * 1024 / 110)); [ "$size" = 1MiB ] && batch=16 n=$DATA_MIB
    for np in 1 "$NP"; do
      local b=$((batch * np))
      enough_steps $n $b
      for verify in off fail; do
        local host=() gpu=() r=() h2d=()
        for i in $(seq "$REPS"); do
          run_bench "$np" "$work/h.json" --manifest "$m" --batch $b --verify $verify --device host
          host+=("$(mibs "$work/h.json")")
          if [ "$gpus" != 0 ]; then
            run_bench "$np" "$work/g.json" --manifest "$m" --batch $b --verify $verify --device placement
            gpu+=("$(mibs "$work/g.json")"); h2d+=("$(h2d_mibs "$work/g.json")")
            r+=("$(ratio "${gpu[-1]}" "${host[-1]}")")
          fi
        done
        local what="$size, $np rank(s), verify $verify, default threads"
        row "host memory, $what" MiB/s "${host[@]}"
        if [ "$gpus" = 0 ]; then awaits "GPU memory, $what"; continue; fi
        row "GPU memory, $what" MiB/s "${gpu[@]}"
        row "ratio GPU / host, $what (goal >= 0.9 at $NP)" x "${r[@]}"
        row "H2D stage, $what" MiB/s "${h2d[@]}"
        if [ -n "$ceiling_mibs" ]; then
          local med; med=$(stats "${gpu[@]}" | cut -d' ' -f1)
          row "ratio GPU delivery / pinned ceiling, $what" x "$(ratio "$med" "$ceiling_mibs")"
        fi
      done
      sweep "$m" "$size" "$np" $b
    done
  done
}

# The best readers x workers (per rank) for GPU delivery, verify off, against the defaults.
sweep() {
  local m=$1 size=$2 np=$3 b=$4 best=0 best_rw="" dev=placement
  [ "$gpus" = 0 ] && dev=host
  for rd in $SWEEP; do
    for wk in $SWEEP; do
      run_bench "$np" "$work/s.json" --manifest "$m" --batch "$b" --verify off --device $dev \
          --readers "$rd" --workers "$wk"
      local v; v=$(mibs "$work/s.json")
      if $py -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$v" "$best"; then
        best=$v; best_rw="$rd $wk"
      fi
    done
  done
  if [ -z "$best_rw" ]; then echo "gpu_perf.sh: the sweep measured nothing" >&2; exit 2; fi
  local def=() tuned=() r=(); read -r rd wk <<<"$best_rw"
  for i in $(seq "$REPS"); do
    run_bench "$np" "$work/d.json" --manifest "$m" --batch "$b" --verify off --device $dev
    run_bench "$np" "$work/t.json" --manifest "$m" --batch "$b" --verify off --device $dev \
        --readers "$rd" --workers "$wk"
    def+=("$(mibs "$work/d.json")"); tuned+=("$(mibs "$work/t.json")")
    r+=("$(ratio "${def[-1]}" "${tuned[-1]}")")
  done
  local what="$size, $np rank(s), verify off, $dev memory"
  row "default threads, $what" MiB/s "${def[@]}"
  row "best sweep ($rd readers, $wk workers), $what" MiB/s "${tuned[@]}"
  row "ratio default / best threads, $what (goal >= 0.9)" x "${r[@]}"
}

sec_au() {
  if [ "$gpus" = 0 ]; then awaits "AU with --compute-gpu"; return; fi
  local m; m=$(data 110KiB)
  for np in 1 "$NP"; do
    local au=()
    for i in $(seq "$REPS"); do
      run_bench "$np" "$work/a.json" --manifest "$m" --batch $((64 * np)) --compute-ms 10 \
          --compute-gpu --device placement
      au+=("$(json "$work/a.json" "['aggregate']['au']")")
    done
    row "AU, --compute-gpu 10 ms, 110KiB, $np rank(s)" AU "${au[@]}"
  done
}

header
for s in $sections; do "sec_$s"; done
