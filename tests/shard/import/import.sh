#!/bin/sh
# Importers of `ingot-manifest pack` on hostile and real input:
#  - a source directory whose name holds single quotes and a `$(...)` packs byte-exact and runs
#    nothing (the Fashion-MNIST idx files were once decompressed by `gzip -dc '<dir>/...'`
#    through popen, so such a name ran as shell);
#  - the Fashion-MNIST package imported through zlib gives the shards the gzip-based importer
#    gave (their sha256 with `ingot-manifest pack --fashion-mnist -o DIR` at 1be6a79, default
#    shard size; that manifest's digest was 7bb8db54da050c92, in format version 1), from that
#    same hostile directory; a corrupt .gz is an error naming it;
#  - bad idx files (wrong magic, image and label counts that differ, truncated images) are errors
#    naming the file and what is wrong;
#  - --shard-size takes the INGOT_* size syntax: 4KB is 4000 bytes, 4KiB 4096.
# usage: import.sh INGOT_MANIFEST
set -eu
IM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
T=$(mktemp -d "${TMPDIR:-/tmp}/ingot-import.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$T"
EVIL="$T/it's \$(touch pwned) 'q"
mkdir -p "$EVIL/sub"
i=0
while [ $i -lt 40 ]; do
    head -c 1000 /dev/urandom > "$EVIL/sub/r$i.bin"
    echo $((i % 3)) > "$EVIL/sub/r$i.cls"
    i=$((i + 1))
done

"$IM" pack "$EVIL" -o "$T/d" > /dev/null || fail "pack of a directory named with a quote and \$(...)"
"$IM" verify "$T/d/manifest.ingot" > /dev/null || fail "verify"
[ "$("$IM" list "$T/d/manifest.ingot" | wc -l)" -eq 80 ] || fail "expected 80 members"
"$IM" cat "$T/d/manifest.ingot" sub/r17 --field bin > got && cmp -s got "$EVIL/sub/r17.bin" || fail "r17.bin differs"

# Size syntax: a sample counts 1000 + 2 bytes of members and 2 x 512 of headers (2026), and a
# shard closes at the first sample boundary past the size: 4KB (4000) -> 2 samples a shard,
# 4KiB (4096) -> 3 (the parser ingot-manifest had before read 4KB as 4096).
"$IM" pack "$EVIL" -o "$T/kb" --shard-size 4KB > /dev/null
"$IM" pack "$EVIL" -o "$T/kib" --shard-size 4KiB > /dev/null
[ "$(ls "$T/kb"/shard-*.tar | wc -l)" -eq 20 ] || fail "4KB: $(ls "$T/kb" | wc -l) files, expected 20 shards"
[ "$(ls "$T/kib"/shard-*.tar | wc -l)" -eq 14 ] || fail "4KiB: $(ls "$T/kib" | wc -l) files, expected 14 shards"
rc=0; "$IM" pack "$EVIL" -o "$T/bad" --shard-size 3XB 2> err || rc=$?
[ "$rc" = 2 ] && grep -q "shard-size '3XB'" err || { cat err; fail "--shard-size 3XB: exit $rc"; }

FM=/usr/share/datasets/fashion-mnist
FM_SHARDS_SHA256=5f18b88b269ef00fe711c90f68d75375029051713f37574aba05bf402e5e6f07
if [ -r "$FM/train-images-idx3-ubyte.gz" ]; then
    cp "$FM"/*.gz "$EVIL/"
    "$IM" pack --fashion-mnist "$EVIL" -o "$T/fm" > /dev/null || fail "Fashion-MNIST from $EVIL"
    # The shards, byte for byte (the manifest's own digest changed with format version 2).
    got=$(cd "$T/fm" && cat shard-*.tar | sha256sum | cut -d' ' -f1)
    [ "$got" = "$FM_SHARDS_SHA256" ] || fail "Fashion-MNIST shards: sha256 $got"
    head -c 5000 "$FM/t10k-images-idx3-ubyte.gz" > "$EVIL/t10k-images-idx3-ubyte.gz"
    if "$IM" pack --fashion-mnist "$EVIL" -o "$T/fm2" 2> err; then fail "truncated .gz accepted"; fi
    grep -q "t10k-images-idx3-ubyte.gz: cannot decompress" err || { cat err; fail "truncated .gz message"; }
else
    echo "note: dataset-fashion-mnist not installed; Fashion-MNIST part not run"
fi
# Bad idx files (small synthetic ones, gzipped): each error names the file and what is wrong.
# idx DIR SPLIT IMG_MAGIC IMAGES PIXEL_BYTES LAB_MAGIC LABELS LABEL_BYTES (2 x 2 pixel images)
idx() {
    python3 - "$@" << 'PY'
import gzip, struct, sys
d, split, im, ni, nb, lm, nl, lb = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
with gzip.open(f"{d}/{split}-images-idx3-ubyte.gz", "wb") as f:
    f.write(struct.pack(">IIII", im, ni, 2, 2) + bytes(nb))
with gzip.open(f"{d}/{split}-labels-idx1-ubyte.gz", "wb") as f:
    f.write(struct.pack(">II", lm, nl) + bytes(lb))
PY
}
bad_idx() { # bad_idx TRAIN_ARGS... -- EXPECTED: the train split bad, the test split good
    rm -rf "$T/idx" && mkdir -p "$T/idx"
    idx "$T/idx" train "$@" && idx "$T/idx" t10k 2051 1 4 2049 1 1
    if "$IM" pack --fashion-mnist "$T/idx" -o "$T/idx-out" 2> err; then fail "bad idx accepted: $*"; fi
}
bad_idx 2051 2 8 2049 3 3
grep -q "train-images-idx3-ubyte.gz holds 2 images but .*train-labels-idx1-ubyte.gz holds 3 labels" err ||
    { cat err; fail "idx count mismatch message"; }
bad_idx 2051 2 4 2049 2 2
grep -q "train-images-idx3-ubyte.gz: 2 images of 2 x 2 pixels need 8 bytes, the file has 4 after its header (truncated)" err ||
    { cat err; fail "idx truncated images message"; }
bad_idx 2051 2 8 7 2 2
grep -q "train-labels-idx1-ubyte.gz: not an idx1 label file" err || { cat err; fail "idx bad magic message"; }
idx "$T/idx" train 2051 2 8 2049 2 2
"$IM" pack --fashion-mnist "$T/idx" -o "$T/idx-ok" > /dev/null || fail "a good synthetic idx pair"
[ "$("$IM" list "$T/idx-ok/manifest.ingot" | wc -l)" -eq 6 ] || fail "3 samples of 2 members expected"

[ ! -e pwned ] && [ ! -e "$EVIL/pwned" ] || fail "a source path ran as shell"
echo ok
