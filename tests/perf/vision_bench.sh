#!/usr/bin/env bash
# Vision pipeline benchmark (issue 26; run by hand, not in ctest). ImageNet-like JPEGs
# (vision_images.py: Pillow, about 500x375, quality 90, IMAGES of them in an ImageFolder),
# decode + RandomResizedCrop(224) + flip + normalise to float32 [3, 224, 224], images/s on one
# core (the whole process pinned to core 0 with taskset) and on all cores, REPS interleaved
# repetitions, median with min and max:
#   ceiling   libjpeg-turbo's own full-size decode of every image, in memory (perf_vision decode:
#             tjbench's defaults, one decoder per thread), and tjbench on one image when
#             libjpeg-turbo-progs is installed
#   transform ingot_transform_image_decode called directly on the images in memory
#   ingot     the loader end to end: shards packed with --labels-from-dirs, read, verified
#             (xxh3), transformed by one worker a core, collated, batch 256, two epochs timed
#             from the first ingot_loader_next() (the pipeline fill included)
#   dali      DALI's CPU pipeline (vision_peers.py dali, PyPI nvidia-dali-cuda120 in DALI_VENV)
#   torch     torchvision's ImageFolder + transforms in a DataLoader (vision_peers.py torch,
#             Debian python3-torch and python3-torchvision)
# goals: ingot >= 1.2x dali, >= 3x torch (images/s per core); then the AU at ResNet-50's demand
# on one rank holding every core: batch 256, 200 ms of emulated compute per step (a sleep).
# usage: tests/perf/vision_bench.sh BUILD_DIR [WORK_DIR]
#   env: REPS (3), IMAGES (5120), DALI_VENV (WORK_DIR/dali-venv: made with pip when missing)
set -euo pipefail
build=$(realpath "$1"); work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/ingot-vision.XXXXXX")}
REPS=${REPS:-3}; IMAGES=${IMAGES:-5120}; DALI_VENV=${DALI_VENV:-$work/dali-venv}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/perf_lib.sh"
pv=$build/tests/perf_vision
cores=$(nproc)
mkdir -p "$work"
load0=$(cut -d' ' -f1 /proc/loadavg)
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

# ---- data
if [ ! -d "$work/images/train" ]; then
  $py "$here/vision_images.py" "$work/images" --images "$IMAGES"
fi
if [ ! -f "$work/packed/manifest.ingot" ]; then
  "$build/apps/ingot-manifest" pack "$work/images/train" -o "$work/packed" --labels-from-dirs
fi
manifest=$work/packed/manifest.ingot
cat "$work"/packed/shard-*.tar > /dev/null # page cache hot for every pipeline
find "$work/images" -type f -exec cat {} + > /dev/null
if [ ! -x "$DALI_VENV/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$DALI_VENV"
  "$DALI_VENV/bin/pip" install -q nvidia-dali-cuda120 || echo "note: DALI could not be installed"
fi

# ---- one measurement: its images/s and CPU-us per image (the RESULT lines of perf_vision and
# vision_peers.py: the first is the rate, the one named *_cpu_* the CPU time)
declare -A R C
one() { # one KEY CMD...
  local key=$1 out; shift
  out=$("$@" 2>/dev/null) || true
  R[$key]="${R[$key]:-} $(awk '/^RESULT/ && $2 !~ /_cpu_/ {print $3; exit}' <<<"$out")"
  C[$key]="${C[$key]:-} $(awk '/^RESULT/ && $2 ~ /_cpu_/ {print $3; exit}' <<<"$out")"
}
pin="taskset -c 0"
for i in $(seq "$REPS"); do
  one ceil1 $pin "$pv" decode "$work/images" 1 1
  one ceilN "$pv" decode "$work/images" "$cores" 1
  one tf1 $pin "$pv" transform "$work/images" 1 1
  one tfN "$pv" transform "$work/images" "$cores" 1
  one ingot1 $pin "$pv" loader "$manifest" 1 2 256 0
  one ingotN "$pv" loader "$manifest" "$cores" 2 256 0
  if [ -x "$DALI_VENV/bin/python" ]; then
    one dali1 $pin "$DALI_VENV/bin/python" "$here/vision_peers.py" dali "$work/images/train" 1 1
    one daliN "$DALI_VENV/bin/python" "$here/vision_peers.py" dali "$work/images/train" "$cores" 1
  fi
  one torch1 $pin $py "$here/vision_peers.py" torch "$work/images/train" 1 1
  one torchN $py "$here/vision_peers.py" torch "$work/images/train" "$cores" 1
done

med() { local v; v=$(stats $1); echo "${v%% *}"; }
echo "# vision benchmark, $(date -u +%F), $(uname -n), $cores cores ($(lscpu | sed -n 's/^Model name: *//p')), REPS=$REPS, load average before: $load0"
echo "# $IMAGES JPEGs: $(du -sh "$work/images/train" | cut -f1), libjpeg-turbo $(dpkg-query -W -f='${Version}' libjpeg62-turbo 2>/dev/null)"
echo "| pipeline | median | min | max | unit |"
echo "|---|---|---|---|---|"
for k in ceil1 ceilN tf1 tfN ingot1 ingotN dali1 daliN torch1 torchN; do
  [ -n "${R[$k]// /}" ] || continue
  n=${k%[1N]}; c=${k: -1}; [ "$c" = N ] && c=$cores
  row "$n, $c core(s)" images/s ${R[$k]}
  [ -n "${C[$k]// /}" ] && row "$n, $c core(s), CPU time" CPU-us/image ${C[$k]}
done
echo
for c in 1 N; do
  cc=$c; [ "$c" = N ] && cc=$cores
  echo "$cc core(s): ingot / ceiling $(ratio "$(med "${R[ingot$c]}")" "$(med "${R[ceil$c]}")")"
  for peer in dali torch; do
    [ -n "${R[$peer$c]// /}" ] || continue
    echo "$cc core(s): ingot / $peer: images/s $(ratio "$(med "${R[ingot$c]}")" "$(med "${R[$peer$c]}")"), CPU time per image $(ratio "$(med "${C[$peer$c]}")" "$(med "${C[ingot$c]}")")"
  done
done
echo "(goals: >= 1.2 against dali, >= 3 against torch)"
if command -v tjbench > /dev/null; then
  img=$(find "$work/images/train" -name '*.JPEG' -print -quit)
  echo; echo "# tjbench (libjpeg-turbo-progs) on one image, one core: $img"
  $pin tjbench "$img" -benchtime 2 -warmup 1 -nowrite 2>/dev/null |
    grep -E "Image size|Frame rate|Throughput" || true
fi
echo
echo "# AU at ResNet-50's demand (batch 256 per rank, 200 ms per step: 1280 images/s a rank)"
"$pv" loader "$manifest" "$cores" 2 256 200 | sed 's/^RESULT /1 rank, all cores: /'
if command -v mpirun > /dev/null && [ "$cores" -ge 2 ]; then
  mpirun --oversubscribe -np "$cores" --bind-to core "$pv" loader "$manifest" 1 2 $((256 * cores)) 200 |
    sed 's/^RESULT /one rank a core: /'
fi
