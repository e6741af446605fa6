#!/bin/sh
# shard/ benchmarks, run by hand (never in ctest). Every figure is a ratio to a peer measured in
# the same run, median of REPS runs with min and max (machines here are shared and noisy).
#   usage: tests/perf/shard_bench.sh BUILD_DIR [WORK_DIR]
# Peers: GNU tar (pack, build), xxhsum -H3 (verify), a local Fisher-Yates shuffle (rank slice),
# zstd -b3 -T1 (decode; the raw Fashion-MNIST images as one stream).
# Environment: REPS (default 3), FILES (default 20000), FILE_KIB (default 16),
#              MANIFEST_SAMPLES (default 10000000), SLICE_N (1e9), SLICE_RANKS (10000),
#              BEFORE_BUILD: a build of an older tree with this perf_shard.c copied in (its
#              startup mode uses the public API only): loader start-up is then measured
#              before and after, each on the manifest format its build writes.
set -eu
B=$1
W=${2:-$(mktemp -d "${TMPDIR:-/tmp}/ingot-bench.XXXXXX")}
REPS=${REPS:-3}
FILES=${FILES:-20000}
FILE_KIB=${FILE_KIB:-16}
IM=$B/apps/ingot-manifest
PERF=$B/tests/perf_shard
mkdir -p "$W"

# run CMD... REPS times; print "median min max" in seconds
timeit() {
    i=0
    : > "$W/times"
    while [ $i -lt "$REPS" ]; do
        s=$(date +%s%N)
        "$@" > /dev/null 2>&1
        e=$(date +%s%N)
        echo "$(( (e - s) / 1000 ))" >> "$W/times"
        i=$((i + 1))
    done
    sort -n "$W/times" | awk '{a[NR] = $1} END {printf "%.3f %.3f %.3f\n", a[int((NR + 1) / 2)] / 1e6, a[1] / 1e6, a[NR] / 1e6}'
}
row() { # NAME BYTES SAMPLES "median min max"
    echo "$4" | awk -v n="$1" -v b="$2" -v s="$3" '{printf "%-34s %9.3f s (min %.3f, max %.3f)  %8.1f MB/s  %10.0f samples/s\n", n, $1, $2, $3, b / $1 / 1e6, s / $1}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {split(a, x, " "); split(b, y, " "); printf "  ratio (median time ours/peer): %.2f\n", x[1] / y[1]}'; }

echo "# shard benchmarks  $(date -u +%FT%TZ)  $(uname -r)  $(nproc) cores  reps=$REPS"
echo "# $(tar --version | head -1); $(xxhsum --version 2>&1 | head -1); zstd $(zstd --version | grep -o 'v[0-9.]*' | head -1)"

# ---- data: FILES samples of FILE_KIB KiB (.bin) + a .cls label, page cache warm
if [ ! -d "$W/src" ]; then
    mkdir -p "$W/src"
    head -c $((FILES * FILE_KIB * 1024)) /dev/urandom > "$W/blob"
    split -a 6 -d -b $((FILE_KIB * 1024)) "$W/blob" "$W/src/s"
    rm "$W/blob"
    for f in "$W"/src/s*; do mv "$f" "$f.bin"; done
    i=0; for f in "$W"/src/s*.bin; do echo $((i % 10)) > "${f%.bin}.cls"; i=$((i + 1)); done
fi
BYTES=$(du -sb "$W/src" | awk '{print $1}')
cat "$W"/src/* > /dev/null

echo
echo "## pack: $FILES samples, $BYTES bytes of files (one output shard vs one tar)"
P=$(timeit sh -c "rm -rf '$W/pk' && '$IM' pack '$W/src' -o '$W/pk' --shard-size 64GiB")
T=$(timeit sh -c "cd '$W' && tar --sort=name -cf '$W/gnu.tar' -C src .")
row "ingot-manifest pack (+ manifest)" "$BYTES" "$FILES" "$P"
row "tar -cf (peer)" "$BYTES" "$FILES" "$T"
ratio "$P" "$T"

echo
echo "## build: index the GNU tar shard ($(stat -c %s "$W/gnu.tar") bytes)"
cat "$W/gnu.tar" > /dev/null
P=$(timeit "$IM" build "$W/gnu.tar" -o "$W/gnu.ingot")
T=$(timeit tar -tvf "$W/gnu.tar")
X=$(timeit xxhsum -H3 "$W/gnu.tar")
SZ=$(stat -c %s "$W/gnu.tar")
row "ingot-manifest build" "$SZ" "$FILES" "$P"
row "tar -tvf (peer: list only)" "$SZ" "$FILES" "$T"
row "xxhsum -H3 (peer: hash only)" "$SZ" "$FILES" "$X"
ratio "$P" "$T"
ratio "$P" "$X"

echo
echo "## verify: re-hash every shard and sample"
P=$(timeit "$IM" verify "$W/gnu.ingot")
row "ingot-manifest verify" "$SZ" "$FILES" "$P"
row "xxhsum -H3 (peer)" "$SZ" "$FILES" "$X"
ratio "$P" "$X"

echo
echo "## manifest open, ${MANIFEST_SAMPLES:-10000000} samples (synthetic), warm page cache"
[ -f "$W/big.ingot" ] || "$PERF" gen "${MANIFEST_SAMPLES:-10000000}" "$W/big.ingot"
cat "$W/big.ingot" > /dev/null
"$PERF" open "$W/big.ingot" "$REPS"
X=$(timeit xxhsum -H3 "$W/big.ingot")
row "xxhsum -H3 of the manifest (peer)" "$(stat -c %s "$W/big.ingot")" "${MANIFEST_SAMPLES:-10000000}" "$X"

echo
echo "## loader start-up: ingot_loader_create (one rank) vs a full open of the same manifest, same process"
# The planner starts at once and fails on the synthetic shards, which do not exist: not timed.
startup() { "$1" startup "$2" "$REPS" 2>&1 | grep -v "cannot open shard"; }
echo "# this build, its own format (version $("$IM" inspect "$W/big.ingot" | awk '/^version/ {print $2}'))"
startup "$PERF" "$W/big.ingot"
if [ -n "${BEFORE_BUILD:-}" ]; then
    [ -f "$W/big-before.ingot" ] || "$BEFORE_BUILD/tests/perf_shard" gen "${MANIFEST_SAMPLES:-10000000}" "$W/big-before.ingot"
    cat "$W/big-before.ingot" > /dev/null
    echo "# before: $BEFORE_BUILD, its own format (version $("$IM" inspect "$W/big-before.ingot" | awk '/^version/ {print $2}'))"
    startup "$BEFORE_BUILD/tests/perf_shard" "$W/big-before.ingot"
    echo "# this build on the older file"
    startup "$PERF" "$W/big-before.ingot"
fi

echo
echo "## per-rank slice"
"$PERF" slice "${SLICE_N:-1000000000}" "${SLICE_RANKS:-10000}" "$REPS"
FM=/usr/share/datasets/fashion-mnist
if [ -r "$FM/train-images-idx3-ubyte.gz" ]; then
    echo
    echo "## read + decode: Fashion-MNIST packed with --zstd 3 (70,000 pgm members of 799 bytes)"
    [ -f "$W/fmz/manifest.ingot" ] || "$IM" pack --fashion-mnist -o "$W/fmz" --zstd 3 --shard-size 64MiB > /dev/null
    # the peer decodes the same raw bytes as one stream (zstd's own benchmark, one thread)
    gzip -dc "$FM/train-images-idx3-ubyte.gz" "$FM/t10k-images-idx3-ubyte.gz" > "$W/fm-raw"
    "$PERF" decode "$W/fmz/manifest.ingot" "$REPS"
    echo "zstd -b3 -T1 (peer, compress, decompress): $(zstd -b3 -T1 "$W/fm-raw" 2>&1 | tr '\r' '\n' | grep 'MB/s,' | tail -1 | sed 's/^ *[^:]*: *//')"
fi

echo
echo "work dir: $W (remove it when done)"
