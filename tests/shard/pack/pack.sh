#!/bin/sh
# `ingot-manifest pack`: directories and existing tars -> shards of a target size (plain, zstd,
# zstd + trained dictionary), each verified and read back byte-exact; Fashion-MNIST (Debian
# package dataset-fashion-mnist) -> 70,000 labelled samples that verify.
# usage: pack.sh INGOT_MANIFEST
set -eu
IM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
T=$(mktemp -d "${TMPDIR:-/tmp}/ingot-pack.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$T/src/sub"
i=0
while [ $i -lt 300 ]; do
    printf 'record %d: the quick brown fox jumps over the lazy dog %d times\n' $i $((i * 7)) > "$T/src/sub/r$i.txt"
    head -c $((i % 50 + 1)) /dev/urandom > "$T/src/sub/r$i.bin"
    echo $((i % 5)) > "$T/src/sub/r$i.cls"
    i=$((i + 1))
done
tar --sort=name -cf "$T/in.tar" -C "$T/src" sub

check() { # DIR: verify, then every member byte-exact
    "$IM" verify "$1/manifest.ingot" > "$1.verify" || { cat "$1.verify"; fail "verify $1"; }
    n=$("$IM" list "$1/manifest.ingot" | wc -l)
    [ "$n" -eq 900 ] || fail "$1: $n members, expected 900"
    for k in 0 1 150 299; do
        for f in txt bin cls; do
            "$IM" cat "$1/manifest.ingot" "sub/r$k" --field $f > "$T/got"
            cmp -s "$T/got" "$T/src/sub/r$k.$f" || fail "$1: sub/r$k.$f differs"
        done
    done
    [ "$("$IM" list "$1/manifest.ingot" | awk '$2 == "sub/r7.cls" {print $5}')" = 2 ] || fail "label"
}
"$IM" pack "$T/src" -o "$T/plain" --shard-size 16KiB > /dev/null
[ "$(ls "$T/plain"/shard-*.tar | wc -l)" -gt 3 ] || fail "shard size not honoured"
check "$T/plain"
"$IM" pack "$T/in.tar" -o "$T/z" --zstd 3 > /dev/null
check "$T/z"
"$IM" list "$T/z/manifest.ingot" | grep -q 'sub/r5.txt.zst' || fail "zstd members expected"
"$IM" pack "$T/src" -o "$T/zd" --zstd 3 --dict > /dev/null
[ -s "$T/zd/dict.zdict" ] || fail "dictionary not written"
check "$T/zd"
"$IM" inspect "$T/zd/manifest.ingot" | grep -q "dictionary    dict.zdict" || fail "inspect dict"
# A dictionary changed or missing after packing: reading a sample fails, naming the file.
cp "$T/zd/dict.zdict" "$T/dict.keep" && printf 'x' >> "$T/zd/dict.zdict"
if "$IM" cat "$T/zd/manifest.ingot" sub/r1 --field txt > /dev/null 2> "$T/err"; then fail "changed dictionary accepted"; fi
grep -q "zd/dict.zdict: dictionary hash differs from the manifest's" "$T/err" || { cat "$T/err"; fail "changed dictionary message"; }
rm "$T/zd/dict.zdict"
if "$IM" cat "$T/zd/manifest.ingot" sub/r1 --field txt > /dev/null 2> "$T/err"; then fail "missing dictionary accepted"; fi
grep -q "zd/dict.zdict" "$T/err" && grep -qi "no such file" "$T/err" || { cat "$T/err"; fail "missing dictionary message"; }
mv "$T/dict.keep" "$T/zd/dict.zdict"
if "$IM" pack "$T/src" -o "$T/bad" --dict 2>/dev/null; then fail "--dict without --zstd"; fi
# Parallel packing gives the same shards and manifest as one job.
"$IM" pack "$T/src" -o "$T/j1" --zstd 3 --shard-size 8KiB --jobs 1 > /dev/null
"$IM" pack "$T/src" -o "$T/j3" --zstd 3 --shard-size 8KiB --jobs 3 > /dev/null
[ "$(ls "$T/j3"/shard-*.tar | wc -l)" -gt 10 ] || fail "expected many shards"
for f in "$T"/j1/*; do cmp -s "$f" "$T/j3/${f##*/}" || fail "--jobs 3 differs from --jobs 1: ${f##*/}"; done
check "$T/j3"

# Integer options are parsed strictly: garbage, out of range or trailing text is a usage error
# (exit 2) naming the option and the value, never a silent 0.
for bad in "--jobs abc" "--jobs 0" "--jobs 4x" "--zstd 23" "--zstd -1" "--zstd x"; do
    rc=0; "$IM" pack "$T/src" -o "$T/bad" $bad 2> "$T/err" || rc=$?
    opt=${bad%% *}; val=${bad#* }
    [ "$rc" = 2 ] && grep -Eq -- "^ingot-manifest: $opt '$val' is (not a non-negative integer|below its minimum|above its maximum)" "$T/err" ||
        { cat "$T/err"; fail "pack $bad: exit $rc"; }
done
rc=0; "$IM" cat "$T/j1/manifest.ingot" r7 --shard 1x 2> "$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q -- "--shard '1x'" "$T/err" || { cat "$T/err"; fail "cat --shard 1x: exit $rc"; }

FM=/usr/share/datasets/fashion-mnist
if [ -r "$FM/train-images-idx3-ubyte.gz" ]; then
    "$IM" pack --fashion-mnist -o "$T/fm" --shard-size 64MiB > /dev/null
    "$IM" verify "$T/fm/manifest.ingot" | grep -q "verified 70000 samples.*0 bad samples, 0 bad shards" || fail "fashion verify"
    "$IM" cat "$T/fm/manifest.ingot" test-09999 --field pgm | head -c 2 | grep -q P5 || fail "pgm"
    # One manifest per split: training never sees a test sample, and the reverse.
    "$IM" pack --fashion-mnist -o "$T/fm-train" --split train > /dev/null || fail "--split train"
    "$IM" pack --fashion-mnist -o "$T/fm-test" --split test > /dev/null || fail "--split test"
    "$IM" verify "$T/fm-train/manifest.ingot" | grep -q "verified 60000 samples.*0 bad samples" ||
        fail "train split verify"
    "$IM" verify "$T/fm-test/manifest.ingot" | grep -q "verified 10000 samples.*0 bad samples" ||
        fail "test split verify"
    [ "$("$IM" list "$T/fm-train/manifest.ingot" | grep -vc ' train-')" = 0 ] || fail "train has others"
    [ "$("$IM" list "$T/fm-test/manifest.ingot" | grep -vc ' test-')" = 0 ] || fail "test has others"
    rc=0; "$IM" pack --fashion-mnist -o "$T/fm-x" --split valid 2> "$T/err" || rc=$?
    [ "$rc" = 2 ] && grep -q -- "--split 'valid': the Fashion-MNIST splits are train and test" \
        "$T/err" || { cat "$T/err"; fail "--split valid: exit $rc"; }
else
    echo "note: dataset-fashion-mnist not installed; Fashion-MNIST part not run"
fi
echo ok
