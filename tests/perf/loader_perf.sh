#!/usr/bin/env bash
# Loader benchmarks (run by hand, not in ctest). Every figure is a ratio to a ceiling or a peer
# measured in the same run, median of REPS runs with min and max (these machines are noisy).
#
#   fio     1 MiB samples from the page cache, one rank: bytes delivered per second vs fio
#           (--mem=mmap: fio's default malloc buffer runs at a fifth of this here; 3 s time-based)
#           buffered sequential reads of the same shard files, as many fio jobs as readers
#           (verify off, and verify on)                                      goal >= 0.9 / 0.8
#   torch   16 KiB and 110 KiB samples: samples/s vs PyTorch DataLoader (Debian python3-torch,
#           num_workers = cores) on the same samples as files and as the same tar shards
#                                                                            goal >= 10x
#   python  16 KiB and 110 KiB samples: samples/s through the Python binding (python_bench.py:
#           ingot.Loader, torch.from_dlpack per batch) vs the C API (ingot-bench) on the same
#           shards                                                           goal >= 0.9
#           and vs PyTorch DataLoader as in torch                            goal >= 5x
#   zstd    zstd-compressed shards: decoded MiB/s with one worker vs `zstd -b3 -T1 -B<sample>`
#           decompression on the same data                                   goal >= 0.85
#   stall   emulated store at 2x the consumer's demand, depth 4: AU after the first step
#                                                                            goal >= 0.99
#   verify  16 KiB and 110 KiB samples (1 GiB and 1.8 GiB of shards: beyond the L3), 8 epochs,
#           verify on against off, on RANKS ranks: the cost 1 - on/off       goal <= 0.12
#   dali    the same shards, verify on, against DALI's CPU webdataset reader (dali_peer.py in
#           DALI_VENV, made with pip when missing): ingot / DALI             goal >= 2
#   dlio    MLPerf Storage's ResNet-50 H100 workload as DLIO runs it: an emulated accelerator is
#           a rank of ingot-bench on this node (114,660-byte samples, batch 400 per accelerator,
#           224 ms of compute per step as a sleep, verify on, 5 epochs); the most accelerators
#           whose AU (mean over ranks, the run's first step left out) is >= 0.90, bisected
#           between DLIO_LO and DLIO_HI to DLIO_STEP, each point the median of REPS runs
#                                                                            goal >= 64
#   maps    shards mapped against preadv (INGOT_MAP_SHARDS) on MAPS_RANKS ranks (1 2 4 8), the
#           DLIO samples (MAPS_SAMPLES, 64000, made when missing), no compute: the ratio by
#           ranks per core, which INGOT_MAP_SHARDS=auto's rule follows
# usage: tests/perf/loader_perf.sh BUILD_DIR [WORK_DIR] [section...]
#   env: REPS (3), READERS (2), RANKS (1; verify), DALI_VENV (WORK_DIR/dali-venv), TORCH_EPOCHS (4),
#        DLIO_LO (16), DLIO_HI (64), DLIO_STEP (4), DLIO_DEPTH (4, the loader's default),
#        DLIO_MAP (auto: INGOT_MAP_SHARDS of the sweep), MAPS_RANKS (1 2 4 8), MAPS_SAMPLES (64000)
set -euo pipefail
build=$(realpath "$1"); work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/ingot-perf.XXXXXX")}
shift $(( $# >= 2 ? 2 : 1 )); sections=${*:-"fio torch python zstd stall"}
REPS=${REPS:-3}; READERS=${READERS:-2}
bench=$build/apps/ingot-bench
here=$(cd "$(dirname "$0")" && pwd)
. "$here/perf_lib.sh"
mkdir -p "$work"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

ingot() { # ingot JSON_OUT ARGS...: one rank of ingot-bench (a singleton: no mpiexec needed)
  local out=$1; shift
  "$bench" --no-progress "$@" --json="$out" >/dev/null
}
header() {
  echo "# loader benchmarks, $(date -u +%F), $(uname -n), $(nproc) cores, REPS=$REPS"
  echo "| measurement | median | min | max | unit |"
  echo "|---|---|---|---|---|"
}

sec_fio() {
  local d=$work/mib1; local r1=() r2=() fio_bw=() fio_fp=() ratio_off=() ratio_on=() ratio_fp=()
  "$bench" --no-progress --generate "$d" --samples 1024 --sample-size 1MiB --shard-size 256MiB \
      --steps 1 --batch 1 >/dev/null
  local files; files=$(ls "$d"/shard-*.tar | tr '\n' ':'); files=${files%:}
  cat "$d"/shard-*.tar >/dev/null # page cache hot
  for i in $(seq "$REPS"); do
    fio --name=seq --rw=read --bs=1M --ioengine=psync --numjobs="$READERS" --filename="$files" \
        --file_service_type=sequential --invalidate=0 --mem=mmap --time_based --runtime=3 --group_reporting --output-format=json \
        >"$work/fio.json"
    local f; f=$($py -c "import json; d=json.load(open('$work/fio.json')); print(d['jobs'][0]['read']['bw_bytes']/1048576)")
    # The same reads into as much buffer memory as the loader's slots (depth 4 x 32 MiB): a
    # batch cannot stay in the CPU cache the way fio's single 1 MiB buffer does.
    fio --name=fp --rw=read --bs=1M --ioengine=libaio --iodepth=64 --numjobs="$READERS" \
        --filename="$files" --file_service_type=sequential --invalidate=0 --mem=mmap \
        --time_based --runtime=3 --group_reporting --output-format=json >"$work/fio.json"
    local fp; fp=$($py -c "import json; d=json.load(open('$work/fio.json')); print(d['jobs'][0]['read']['bw_bytes']/1048576)")
    ingot "$work/off.json" --manifest "$d/manifest.ingot" --batch 32 --epochs 2 --readers "$READERS" --verify off
    ingot "$work/on.json" --manifest "$d/manifest.ingot" --batch 32 --epochs 2 --readers "$READERS" --verify fail
    local off on; off=$(json "$work/off.json" "['aggregate']['mib_per_s']"); on=$(json "$work/on.json" "['aggregate']['mib_per_s']")
    fio_bw+=("$f"); fio_fp+=("$fp"); r1+=("$off"); r2+=("$on")
    ratio_fp+=("$($py -c "print($off/$fp)")")
    ratio_off+=("$($py -c "print($off/$f)")"); ratio_on+=("$($py -c "print($on/$f)")")
  done
  row "fio buffered seq read, $READERS jobs (ceiling)" MiB/s "${fio_bw[@]}"
  row "ingot 1 MiB samples, verify off" MiB/s "${r1[@]}"
  row "ingot 1 MiB samples, verify on (xxh3)" MiB/s "${r2[@]}"
  row "fio libaio, 64 x 1 MiB buffers per job (slot footprint)" MiB/s "${fio_fp[@]}"
  row "ratio verify off / fio (goal >= 0.9)" x "${ratio_off[@]}"
  row "ratio verify off / fio with the slot footprint" x "${ratio_fp[@]}"
  row "ratio verify on / fio (goal >= 0.8)" x "${ratio_on[@]}"
}

torch_data() { # torch_data SIZE: the samples of SIZE as shards and as files, page cache hot
  local size=$1 n=16384; [ "$size" = 110KiB ] && n=4096
  local d=$work/t$size
  "$bench" --no-progress --generate "$d" --samples $n --sample-size "$size" \
      --shard-size 64MiB --steps 1 --batch 1 >/dev/null
  if [ ! -d "$d/files" ]; then mkdir -p "$d/files"; for t in "$d"/shard-*.tar; do tar -xf "$t" -C "$d/files"; done; fi
  cat "$d"/shard-*.tar "$d"/files/* >/dev/null 2>&1 || true
}
samples_per_s() { $py -c "import json,sys; print(json.load(sys.stdin)['samples_per_s'])"; }
# torch_files|torch_tar DIR [EPOCHS (1)]: the first batch is left out, the workers persist.
torch_files() { $py "$here/torch_peer.py" files "$1/files" --batch 256 --epochs "${2:-1}" | samples_per_s; }
torch_tar() { $py "$here/torch_peer.py" tar "$1"/shard-*.tar --batch 256 --epochs "${2:-1}" | samples_per_s; }

sec_torch() { # both sides TORCH_EPOCHS epochs (4): start-up is not what is compared
  local e=${TORCH_EPOCHS:-4}
  for size in 16KiB 110KiB; do
    local d=$work/t$size ing=() tf=() tt=() rf=() rt=()
    torch_data "$size"
    for i in $(seq "$REPS"); do
      ingot "$work/t.json" --manifest "$d/manifest.ingot" --batch 256 --epochs "$e"
      local s; s=$(json "$work/t.json" "['aggregate']['samples_per_s']")
      local f t; f=$(torch_files "$d" "$e"); t=$(torch_tar "$d" "$e")
      ing+=("$s"); tf+=("$f"); tt+=("$t")
      rf+=("$($py -c "print($s/$f)")"); rt+=("$($py -c "print($s/$t)")")
    done
    row "ingot $size samples (1 rank, verify on)" samples/s "${ing[@]}"
    row "PyTorch DataLoader, $size files" samples/s "${tf[@]}"
    row "PyTorch DataLoader, $size same tar shards" samples/s "${tt[@]}"
    row "ratio ingot / torch files, $size (goal >= 10)" x "${rf[@]}"
    row "ratio ingot / torch tar, $size (goal >= 10)" x "${rt[@]}"
  done
}

sec_python() { # the binding (build/python) against the C API and the DataLoader, interleaved
  for size in 16KiB 110KiB; do
    local d=$work/t$size c=() p=() tt=() tf=() rc=() rt=() rf=()
    torch_data "$size"
    for i in $(seq "$REPS"); do
      ingot "$work/t.json" --manifest "$d/manifest.ingot" --batch 256
      local s b f t; s=$(json "$work/t.json" "['aggregate']['samples_per_s']")
      b=$(PYTHONPATH="$build/python" $py "$here/python_bench.py" "$d/manifest.ingot" --batch 256 | samples_per_s)
      t=$(torch_tar "$d"); f=$(torch_files "$d")
      c+=("$s"); p+=("$b"); tt+=("$t"); tf+=("$f")
      rc+=("$($py -c "print($b/$s)")"); rt+=("$($py -c "print($b/$t)")"); rf+=("$($py -c "print($b/$f)")")
    done
    row "ingot C API $size samples (ingot-bench, 1 rank)" samples/s "${c[@]}"
    row "ingot Python binding $size (from_dlpack per batch)" samples/s "${p[@]}"
    row "PyTorch DataLoader, $size same tar shards" samples/s "${tt[@]}"
    row "PyTorch DataLoader, $size files" samples/s "${tf[@]}"
    row "ratio binding / C API, $size (goal >= 0.9)" x "${rc[@]}"
    row "ratio binding / torch tar, $size (goal >= 5)" x "${rt[@]}"
    row "ratio binding / torch files, $size (goal >= 5)" x "${rf[@]}"
  done
}

sec_zstd() {
  local d=$work/zstd ing=() zb=() ratio=()
  "$bench" --no-progress --generate "$d" --samples 2048 --sample-size 256KiB \
      --compressible --zstd 3 --shard-size 64MiB --steps 1 --batch 1 >/dev/null
  # The same raw data as one file, for zstd -b (split into sample-sized independent blocks).
  if [ ! -f "$work/zstd.raw" ]; then
    $py - "$work/zstd.raw" <<'PY'
import sys
words = [b"ingot ", b"batch ", b"shard ", b"tensor ", b"gradient ", b"epoch ", b"sample ", b"rank "]
M = (1 << 64) - 1
def splitmix(s):
    s = (s + 0x9e3779b97f4a7c15) & M
    z = s
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return s, z ^ (z >> 31)
with open(sys.argv[1], "wb") as f:
    for i in range(2048):
        s, out, n = (i * 0x2545f4914f6cdd1d + 1) & M, bytearray(), 256 * 1024
        while len(out) < n:
            s, v = splitmix(s)
            out += words[v % 8]
        f.write(out[:n])
PY
  fi
  for i in $(seq "$REPS"); do
    ingot "$work/z.json" --manifest "$d/manifest.ingot" --batch 32 --epochs 2 --readers 1 --workers 1 --verify off
    local s; s=$(json "$work/z.json" "['aggregate']['mib_per_s']")
    # Last progress line carrying both speeds: "... -> N (xR), C MB/s, D MB/s" (D: decompression)
    local z; z=$(zstd -b3 -e3 -T1 -B256KiB -i3 "$work/zstd.raw" 2>&1 | tr '\r' '\n' \
        | grep -E 'MB/s, *[0-9.]+ MB/s' | tail -1 | $py -c "
import re,sys; m=re.findall(r'([0-9.]+) MB/s', sys.stdin.read()); print(float(m[-1])*1e6/1048576)")
    ing+=("$s"); zb+=("$z"); ratio+=("$($py -c "print($s/$z)")")
  done
  row "zstd -b3 -T1 -B256KiB decompression (ceiling)" MiB/s "${zb[@]}"
  row "ingot zstd shards, 1 worker, decoded" MiB/s "${ing[@]}"
  row "ratio ingot / zstd -b per core (goal >= 0.85)" x "${ratio[@]}"
}

sec_stall() {
  local d=$work/t110KiB au=()
  "$bench" --no-progress --generate "$d" --samples 4096 --sample-size 110KiB \
      --shard-size 64MiB --steps 1 --batch 1 >/dev/null
  # demand: 32 x 110 KiB per 10 ms = 344 MiB/s; the store serves twice that, 5 ms per request
  for i in $(seq "$REPS"); do
    INGOT_STORAGE_EMULATE="bw=688MiB/s,lat=5ms" "$bench" \
        --no-progress --manifest "$d/manifest.ingot" --batch 32 --depth 4 --compute-ms 10 \
        --json="$work/s.json" >/dev/null
    au+=("$(json "$work/s.json" "['aggregate']['au']")")
  done
  row "AU, store at 2x demand, depth 4 (goal >= 0.99)" AU "${au[@]}"
}

big_data() { # big_data SIZE: 1 GiB of 16 KiB or 1.8 GiB of 110 KiB samples, page cache hot
  local size=$1 n=65536; [ "$size" = 110KiB ] && n=16384
  "$bench" --no-progress --generate "$work/b$size" --samples $n --sample-size "$size" \
      --shard-size 64MiB --steps 1 --batch 1 >/dev/null
  cat "$work/b$size"/shard-*.tar >/dev/null
}
ranks() { # ranks N ARGS...: ingot-bench on N ranks of this node (a singleton for 1)
  local n=$1; shift
  if [ "$n" = 1 ]; then ingot "$@"; return; fi
  local out=$1; shift
  mpiexec --oversubscribe --bind-to none -np "$n" "$bench" --no-progress "$@" --json="$out" >/dev/null
}

sec_verify() {
  local np=${RANKS:-1}
  for size in 16KiB 110KiB; do
    local d=$work/b$size on=() off=() cost=()
    big_data "$size"
    for i in $(seq "$REPS"); do
      ranks "$np" "$work/v.json" --manifest "$d/manifest.ingot" --batch 256 --epochs 8 --verify fail
      local a; a=$(json "$work/v.json" "['aggregate']['samples_per_s']")
      ranks "$np" "$work/v.json" --manifest "$d/manifest.ingot" --batch 256 --epochs 8 --verify off
      local b; b=$(json "$work/v.json" "['aggregate']['samples_per_s']")
      on+=("$a"); off+=("$b"); cost+=("$($py -c "print(1 - $a / $b)")")
    done
    row "ingot $size, $np rank(s), verify on" samples/s "${on[@]}"
    row "ingot $size, $np rank(s), verify off" samples/s "${off[@]}"
    row "verify cost 1 - on/off, $size (goal <= 0.12)" x "${cost[@]}"
  done
}

sec_dali() {
  local venv=${DALI_VENV:-$work/dali-venv}
  if [ ! -x "$venv/bin/python" ]; then
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    "$venv/bin/pip" install -q nvidia-dali-cuda120 || { echo "note: DALI could not be installed"; return; }
  fi
  for size in 16KiB 110KiB; do
    local d=$work/b$size ing=() dl=() r=()
    big_data "$size"
    for i in $(seq "$REPS"); do
      ingot "$work/d.json" --manifest "$d/manifest.ingot" --batch 256 --epochs 4 --verify fail
      local a; a=$(json "$work/d.json" "['aggregate']['samples_per_s']")
      local b; b=$("$venv/bin/python" "$here/dali_peer.py" "$d"/shard-*.tar --batch 256 --epochs 4 \
          | tail -1 | samples_per_s)
      ing+=("$a"); dl+=("$b"); r+=("$($py -c "print($a / $b)")")
    done
    row "ingot $size samples, verify on (1 rank)" samples/s "${ing[@]}"
    row "DALI webdataset reader, $size, a thread per core" samples/s "${dl[@]}"
    row "ratio ingot / DALI, $size (goal >= 2)" x "${r[@]}"
  done
}

# One point of the DLIO sweep: REPS runs of N accelerators, their AU and each run's lowest rank's
# AU as rows; dlio_ok says whether the median AU is >= 0.90 (a run that fails counts as AU 0).
dlio_point() {
  local n=$1 au=() low=()
  for i in $(seq "$REPS"); do
    if INGOT_MAP_SHARDS=${DLIO_MAP:-auto} ranks "$n" "$work/dlio.json" --manifest "$work/dlio/manifest.ingot" --batch $((400 * n)) \
        --compute-ms 224 --epochs 5 --depth "${DLIO_DEPTH:-4}" --verify fail; then
      au+=("$(json "$work/dlio.json" "['aggregate']['au']")")
      low+=("$(json "$work/dlio.json" "['aggregate']['au_min']")")
    else
      au+=(0); low+=(0)
    fi
  done
  row "DLIO ResNet-50 H100, $n accelerators: AU" AU "${au[@]}"
  row "  the lowest rank's AU in each run" AU "${low[@]}"
  dlio_ok=$($py -c "import statistics,sys; print(int(statistics.median(map(float, sys.argv[1:])) >= 0.90))" "${au[@]}")
}

sec_dlio() {
  # (row() reads into lo and hi: the bounds are named apart)
  local good=${DLIO_LO:-16} bad=${DLIO_HI:-64} step=${DLIO_STEP:-4}
  # Two steps per epoch at the top of the range: 5.5 GiB of samples for 64 accelerators, in the
  # page cache, beside 4 x 44 MiB of batch slots per rank (11 GiB at 64 ranks).
  "$bench" --no-progress --generate "$work/dlio" --samples $((bad * 400 * 2)) --sample-size 114660 \
      --shard-size 256MiB --steps 1 --batch 1 >/dev/null
  cat "$work/dlio"/shard-*.tar >/dev/null
  dlio_point "$good"
  if [ "$dlio_ok" = 0 ]; then
    echo "| DLIO ResNet-50 H100: accelerators at AU >= 0.90 (goal >= 64) | < $good | | | accelerators |"
    return
  fi
  dlio_point "$bad"
  if [ "$dlio_ok" = 1 ]; then
    echo "| DLIO ResNet-50 H100: accelerators at AU >= 0.90 (goal >= 64) | >= $bad | | | accelerators |"
    return
  fi
  while [ $((bad - good)) -gt "$step" ]; do # good passes, bad fails
    local mid=$(((good + bad) / 2 / step * step))
    [ "$mid" -le "$good" ] && mid=$((good + step))
    dlio_point "$mid"
    if [ "$dlio_ok" = 1 ]; then good=$mid; else bad=$mid; fi
  done
  echo "| DLIO ResNet-50 H100: accelerators at AU >= 0.90 (goal >= 64) | $good | | $bad fails | accelerators |"
}

# Shards mapped against preadv by ranks per core (INGOT_MAP_SHARDS=auto's rule): N ranks read
# the DLIO samples, every page a first touch in each process, no compute; aggregate samples/s.
sec_maps() {
  local d=$work/dlio
  if [ ! -f "$d/manifest.ingot" ]; then
    "$bench" --no-progress --generate "$d" --samples "${MAPS_SAMPLES:-64000}" --sample-size 114660 \
        --shard-size 256MiB --steps 1 --batch 1 >/dev/null
  fi
  cat "$d"/shard-*.tar >/dev/null
  for n in ${MAPS_RANKS:-1 2 4 8}; do
    local y=() m=() r=()
    for i in $(seq "$REPS"); do
      for mode in y n; do
        local args=(--no-progress --manifest "$d/manifest.ingot" --batch $((400 * n)) --epochs 2
                    --depth 2 --verify fail --json="$work/maps.json")
        if [ "$n" = 1 ]; then
          INGOT_MAP_SHARDS=$mode "$bench" "${args[@]}" >/dev/null
        else
          INGOT_MAP_SHARDS=$mode mpiexec -x INGOT_MAP_SHARDS --oversubscribe --bind-to none \
              -np "$n" "$bench" "${args[@]}" >/dev/null
        fi
        local v; v=$(json "$work/maps.json" "['aggregate']['samples_per_s']")
        if [ $mode = y ]; then y+=("$v"); else m+=("$v"); fi
      done
      r+=("$($py -c "print(${y[-1]} / ${m[-1]})")")
    done
    row "$n rank(s) on $(nproc) cores, shards mapped" samples/s "${y[@]}"
    row "$n rank(s) on $(nproc) cores, preadv" samples/s "${m[@]}"
    row "ratio mapped / preadv, $n rank(s) (auto maps while ranks <= PUs)" x "${r[@]}"
  done
}

header
for s in $sections; do "sec_$s"; done
