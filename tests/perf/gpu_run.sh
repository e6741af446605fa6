#!/usr/bin/env bash
# Issue 21's GPU run, in one call of the device tool (about 6-7 minutes), in three tiers:
#   must    the node's identity (nvidia-smi, the driver, PyTorch's interpreter, ucx_info -v,
#           ingot-info); the main tier (its MPI tests in the background from the start, the rest
#           at once); ctest -L gpu (delivery, pinning, streams, NCCL collectives, PyTorch beside
#           ingot, the Python binding's GPU batches); the README's demo; ingot-allreduce-bench
#           --backend nccl on 1 rank; ingot-train with cuBLAS against CBLAS; the bad inputs
#           (--device 1 on a 1-GPU node, CUDA_VISIBLE_DEVICES naming a missing device, a device
#           slot ring larger than the GPU's memory)
#   should  tests/perf/gpu_perf.sh ceiling, supply and au (REPS=1); the peer cache into GPU
#           memory (source.cache.fault_device, fault_fetch_device, node)
#   could   gpu_perf.sh's readers x workers sweep (the thread defaults, issue 21 item 3)
# Every step has its own timeout (cut to what is left of BUDGET_S) and writes its log under OUT as
# soon as it ends, with one line in OUT/summary.tsv (step, exit status or a verdict, seconds):
# a call cut at its limit still brings back what finished. Nothing waits without a deadline.
# Where no CUDA device is usable the GPU steps skip (their tests exit 77) and the plumbing still
# runs: that is how it is checked on the build machine.
#
# On the build machine (the bundle is about 30 MiB; 64 MiB may travel):
#   FMNIST_SMALL=1 ../shared/tools/gpu-bundle.sh --ucx-cuda -- \
#       -DINGOT_TEST_PYTHON=/opt/torch/.venv/bin/python3 -DINGOT_TESTS_LINK_SHARED=ON
# INGOT_TESTS_LINK_SHARED is needed: without it every test links the static library whole (1.3 MB
# each, stripped) and the bundle is 63 MiB, which the script refuses (2026-11-29). With it, the whole
# of Fashion-MNIST fits too (about 52 MiB): leave FMNIST_SMALL out and
#   mkdir -p .gpu-bundle/fashion-mnist && cp /usr/share/datasets/fashion-mnist/* .gpu-bundle/fashion-mnist/
# With the device tool (carry [".gpu-bundle"], timeout_s 480):
#   . .gpu-bundle/on-device.sh && tests/perf/gpu_run.sh must should could
# usage: tests/perf/gpu_run.sh [must] [should] [could]      (default: all three, in that order)
# env: OUT (the device tool's $OUT; else a temporary folder), BUILD (/tmp/ingot-gpu/build), REL (a
# Release tree for the figures; default BUILD, whose fault injection each figure's log then says),
# TORCH_PY (/opt/torch/.venv/bin/python3, else python3), BUDGET_S (420), JOBS (8), MPI_JOBS (4:
# the MPI tests at once; one at a time they took 484 s on the 2-core VM), FMNIST (the
# Fashion-MNIST idx files: the Debian package's folder, else .gpu-bundle/fashion-mnist).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/ingot-gpu-run.XXXXXX")}
build=${BUILD:-/tmp/ingot-gpu/build}
rel=${REL:-$build}
py=${TORCH_PY:-/opt/torch/.venv/bin/python3}
[ -x "$py" ] || py=python3
BUDGET_S=${BUDGET_S:-420}
JOBS=${JOBS:-8}
MPI_JOBS=${MPI_JOBS:-4}
fm=${FMNIST:-/usr/share/datasets/fashion-mnist}
[ -r "$fm/train-images-idx3-ubyte.gz" ] || fm=$src/.gpu-bundle/fashion-mnist
tiers=${*:-"must should could"}
apps=$build/apps
summary=$out/summary.tsv
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# Open MPI kept off UCX (its ob1 PML over shared memory and tcp, no UCX one-sided): with the bundle's
# CUDA-enabled UCX ahead of the system's, only one libucp may load per process, and it is ours.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx}
mkdir -p "$out/work"
printf 'step\tresult\tseconds\n' > "$summary"
t0=$SECONDS
n=0

left() { echo $((BUDGET_S - (SECONDS - t0))); }

# step NAME LIMIT_S CMD...: run CMD under timeout (LIMIT_S, cut to the budget left) into
# OUT/NN-NAME.log; record its exit status (124: cut at its limit).
step() {
    local name=$1 limit=$2 rest s rc=0
    shift 2
    n=$((n + 1))
    local log
    log=$(printf '%s/%02d-%s.log' "$out" "$n" "$name")
    rest=$(left)
    if [ "$rest" -lt 15 ]; then
        printf '%s\tnot run (budget)\t0\n' "$name" >> "$summary"
        return 0
    fi
    [ "$limit" -le "$rest" ] || limit=$rest
    s=$SECONDS
    { echo "\$ $*"; echo "# limit ${limit}s, $(date -u +%FT%TZ)"; } > "$log"
    timeout -k 10 "$limit" "$@" >> "$log" 2>&1 < /dev/null || rc=$?
    printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - s))" >> "$summary"
    echo "== $name: exit $rc after $((SECONDS - s)) s (${log##*/})"
    return 0
}

# expect NAME LIMIT_S WANT_RC PATTERN CMD...: a bad input: CMD must exit WANT_RC with a line
# matching PATTERN (grep -Ei) and no crash; the verdict goes into the summary.
expect() {
    local name=$1 limit=$2 want=$3 pattern=$4
    shift 4
    step "$name" "$limit" "$@"
    local log rc verdict
    log=$(printf '%s/%02d-%s.log' "$out" "$n" "$name")
    rc=$(tail -1 "$summary" | cut -f2)
    if [ "$rc" = "not run (budget)" ]; then return 0; fi
    if [ "$rc" = "$want" ] && grep -Eiq -- "$pattern" "$log" &&
        ! grep -Eq "Segmentation fault|core dumped|signal 6|Aborted" "$log"; then
        verdict="ok"
    else
        verdict="FAIL (exit $rc, want $want and /$pattern/)"
    fi
    sed -i '$ d' "$summary"
    printf '%s\t%s\t%s\n' "$name" "$verdict" "$(grep -c . "$log")" >> "$summary"
}


env_steps() {
    step env-nvidia-smi 20 nvidia-smi
    step env-gpu 20 nvidia-smi --query-gpu=name,driver_version,memory.total,memory.free \
        --format=csv
    step env-torch 60 "$py" -c 'import sys, torch; print(sys.executable, sys.version); print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available(), torch.cuda.device_count())'
    step env-ucx 20 ucx_info -v
    step env-ingot-info 60 "$apps/ingot-info"
    step env-trees 10 sh -c "grep -E '^(CMAKE_BUILD_TYPE|INGOT_FAULT_INJECTION|INGOT_TEST_PYTHON)' '$build/CMakeCache.txt' '$rel/CMakeCache.txt'"
}

gpu_count() {
    nvidia-smi --query-gpu=index --format=csv,noheader 2> /dev/null | grep -c . || true
}

bad_inputs() {
    local data=$out/work/small big=$out/work/big ngpu
    ngpu=$(gpu_count)
    timeout 120 "$apps/ingot-bench" --generate "$data" --samples 256 --sample-size 64KiB \
        --batch 8 --steps 1 --no-progress > "$out/work/generate.log" 2>&1
    expect bad-device-1 60 1 "device" "$apps/ingot-bench" --manifest "$data/manifest.ingot" \
        --device "$ngpu" --epochs 1 --no-progress
    expect bad-visible-devices 60 1 "device|CUDA" env CUDA_VISIBLE_DEVICES=7 \
        "$apps/ingot-bench" --manifest "$data/manifest.ingot" --device 0 --epochs 1 --no-progress
    # a device slot ring of 1.5x the GPU's memory: slots of 64 x 1 MiB, depth to fit
    local mib depth
    mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2> /dev/null | head -1)
    depth=$(((${mib:-0} * 3 / 2) / 64 + 1))
    timeout 120 "$apps/ingot-bench" --generate "$big" --samples 128 --sample-size 1MiB \
        --batch 8 --steps 1 --no-progress > "$out/work/generate-big.log" 2>&1
    if [ "${mib:-0}" -gt 0 ]; then
        expect bad-slot-ring 90 1 "memory" env INGOT_LOADER_MEMORY=1TiB "$apps/ingot-bench" \
            --manifest "$big/manifest.ingot" --device 0 --batch 64 --depth "$depth" --epochs 1 \
            --no-progress
    else
        printf 'bad-slot-ring\tskipped (no GPU)\t0\n' >> "$summary"
    fi
}

train_blas() { # ingot-train on 1 rank, 2 epochs: cuBLAS against CBLAS, samples/s in the JSON
    [ -r "$fm/train-images-idx3-ubyte.gz" ] || {
        printf 'train-blas\tskipped (no Fashion-MNIST at %s)\t0\n' "$fm" >> "$summary"
        return 0
    }
    local d=$out/work/fm
    step train-pack 120 sh -c "'$apps/ingot-manifest' pack --fashion-mnist '$fm' -o '$d/train' \
        --split train && '$apps/ingot-manifest' pack --fashion-mnist '$fm' -o '$d/test' --split test"
    for blas in cuda cpu; do
        step "train-blas-$blas" 120 "$apps/ingot-train" --model mlp --epochs 2 --blas "$blas" \
            --train "$d/train/manifest.ingot" --test "$d/test/manifest.ingot" \
            --json "$out/train-$blas.json"
    done
}

must() {
    env_steps
    # the main tier's MPI tests (most of 4 ranks; MPI_JOBS at a time, as the main tier runs them
    # 3 at a time on 2 cores in CI) run beside everything else
    local mpi_log=$out/main-mpi.log mpi_limit
    mpi_limit=$(($(left) - 30))
    (cd "$build" && timeout -k 10 "$mpi_limit" ctest --output-on-failure --timeout 150 \
        -j "$MPI_JOBS" -L mpi -LE 'gpu|lint|layers|install' > "$mpi_log" 2>&1 < /dev/null
    echo "exit $?" >> "$mpi_log") &
    local mpi_pid=$!
    step main-host 240 env -C "$build" ctest --output-on-failure --timeout 180 -j "$JOBS" \
        -LE 'mpi|gpu|lint|layers|install|fuzz'
    step gpu-tests 300 env -C "$build" ctest --output-on-failure --timeout 180 -L gpu -j 2
    if [ -r "$fm/train-images-idx3-ubyte.gz" ]; then
        step demo 240 env DEMO_BIN="$apps" DEMO_DIR="$out/work/demo" DEMO_FMNIST="$fm" \
            DEMO_EPOCHS=3 "$src/setup.sh" demo
    else
        printf 'demo\tskipped (no Fashion-MNIST at %s)\t0\n' "$fm" >> "$summary"
    fi
    step arb-nccl 90 mpiexec -np 1 "$apps/ingot-allreduce-bench" --backend nccl \
        --json "$out/arb-nccl.json"
    train_blas
    bad_inputs
    # the background tier ends by its own deadline; wait for it, no longer
    local s=$SECONDS
    wait "$mpi_pid"
    printf 'main-mpi\t%s\t%s\n' "$(tail -1 "$mpi_log")" "$((SECONDS - s))" >> "$summary"
    grep -E "tests passed|\(Failed\)|\(Timeout\)" "$mpi_log" | sed 's/^[[:space:]]*/main-mpi: /' \
        >> "$summary"
}

should() {
    step perf-gpu 240 env REPS=1 "$src/tests/perf/gpu_perf.sh" "$rel" "$out/work/perf" \
        ceiling supply au
    step cache-device 150 env -C "$build" ctest --output-on-failure --timeout 120 \
        -R '^source\.cache\.(fault_device|fault_fetch_device|node)$'
}

could() {
    step perf-sweep 240 env REPS=1 SWEEP="1 2 4 8" "$src/tests/perf/gpu_perf.sh" "$rel" \
        "$out/work/sweep" supply
}

echo "# gpu_run: tiers '$tiers', build $build, figures from $rel, out $out, budget ${BUDGET_S}s"
for tier in $tiers; do
    case $tier in
    must | should | could) "$tier" ;;
    *)
        echo "unknown tier '$tier' (must, should, could)" >&2
        exit 2
        ;;
    esac
done
rm -rf "$out/work" # datasets and demo state: not worth bringing back
echo "# done after $((SECONDS - t0)) s"
column -t -s "$(printf '\t')" "$summary"
