#!/bin/sh
# vision_mpi.sh MPIEXEC TEST_VISION_MPI: the same ImageFolder through the image transform on 1
# rank and on 4: every sample of both epochs handed over once, with the same label and the same
# output bytes (its crop and flip drawn from seed, epoch and index alone).
set -eu
mpiexec=$1; exe=$2
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ingot-vision-mpi.XXXXXX")
trap 'rm -rf "$dir"' EXIT
for np in 1 4; do
    timeout -k 5 120 "$mpiexec" --oversubscribe -np $np "$exe" "$dir" "$dir/out$np"
    cat "$dir"/out$np.* | sort > "$dir/all$np"
done
[ "$(wc -l < "$dir/all1")" = 96 ] || { echo "FAIL: $(wc -l < "$dir/all1") lines on 1 rank, expected 96"; exit 1; }
[ "$(cut -d' ' -f1,2 "$dir/all4" | sort -u | wc -l)" = 96 ] || { echo "FAIL: 4 ranks: not every sample once"; exit 1; }
cmp "$dir/all1" "$dir/all4" || { echo "FAIL: 1 and 4 ranks differ"; diff "$dir/all1" "$dir/all4" | head; exit 1; }
echo "vision on 1 and 4 ranks: the same 96 outputs"
