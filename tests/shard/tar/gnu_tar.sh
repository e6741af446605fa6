#!/bin/sh
# Shards made by GNU tar (pax, gnu and ustar formats, long names, a zstd member, a symlink) are
# indexed by `ingot-manifest build` without rewriting; the member lists must equal `tar -tvf`'s
# regular files (differential oracle), every field must read back byte-exact through `cat`,
# `verify` must pass, and after a bit flip `verify` must fail naming the sample's key and shard.
# usage: gnu_tar.sh INGOT_MANIFEST
set -eu
IM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
command -v tar >/dev/null || { echo "SKIP: GNU tar not installed"; exit 77; }
command -v zstd >/dev/null || { echo "SKIP: zstd CLI not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ingot-gnutar.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$T/src"
cd "$T/src"
LONGDIR=a/$(printf 'd%.0s' $(seq 1 60))/$(printf 'e%.0s' $(seq 1 60))
mkdir -p "$LONGDIR" sub
i=0
while [ $i -lt 12 ]; do
    head -c $((i * 37 + 5)) /dev/urandom > "s$i.bin"
    echo $((i % 4)) > "s$i.cls"
    printf 'text of sample %d\n' $i > "s$i.txt"
    i=$((i + 1))
done
head -c 3000 /dev/urandom > raw.dat
zstd -q -c raw.dat > z1.data.zst && rm raw.dat
echo nested > sub/n1.txt
echo long > "$LONGDIR/longkey.txt"
ln -s s1.bin link.bin
cd "$T"
tar --sort=name --format=pax -cf shard-pax.tar -C src .
tar --sort=name --format=gnu -cf shard-gnu.tar -C src .
tar --sort=name --format=ustar -cf shard-ustar.tar -C src .

"$IM" build shard-pax.tar shard-gnu.tar shard-ustar.tar -o m.ingot || fail "build"
"$IM" verify m.ingot > verify.out || { cat verify.out; fail "verify of a good build"; }
"$IM" inspect m.ingot > inspect.out || fail "inspect"
grep -q "^samples       45$" inspect.out || { cat inspect.out; fail "inspect: sample count"; }
grep -q "^shards        3$" inspect.out || fail "inspect: shard count"
grep -q "^data  *3  *3 " inspect.out || fail "inspect: zstd field 'data' x3"
grep -q "sample size histogram" inspect.out || fail "inspect: histogram"
if "$IM" cat m.ingot no-such-key 2> err.out; then fail "cat of a missing key"; fi
grep -q "no sample with key 'no-such-key'" err.out || fail "cat: message"
if "$IM" frobnicate 2> /dev/null; then fail "unknown command accepted"; fi
"$IM" --help | grep -q "usage: ingot-manifest" || fail "--help"
if INGOT_LOG_LEVEL=bogus "$IM" inspect m.ingot > /dev/null 2> err.out; then fail "bad INGOT_LOG_LEVEL accepted"; fi
grep -q "INGOT_LOG_LEVEL" err.out || { cat err.out; fail "config error must name the variable"; }

# Differential: regular members per tar -tvf == members in the manifest.
for s in shard-pax.tar shard-gnu.tar shard-ustar.tar; do
    tar -tvf "$s" | awk '$1 ~ /^-/ {print $6, $3}' | sed 's|^\./||' | sort > "$s.tar-list"
    "$IM" list m.ingot | awk -v s="$s" '$1 == s {print $2, $3}' | sort > "$s.our-list"
    diff "$s.tar-list" "$s.our-list" || fail "member list of $s differs from tar -tvf"
    [ "$(wc -l < "$s.our-list")" -eq 39 ] || fail "$s: expected 39 members"
done

# Byte-exact reads through the manifest (zstd decoded).
shardno=0
for s in shard-pax.tar shard-gnu.tar shard-ustar.tar; do
    for f in $(cd src && find . -type f | sed 's|^\./||'); do
        base=${f##*/}; dir=${f%"$base"}; key=$dir${base%%.*}; field=${base#*.}
        case $field in
            *.zst) field=${field%.zst}; zstd -q -d -c "src/$f" > expect ;;
            *) cp "src/$f" expect ;;
        esac
        "$IM" cat m.ingot "$key" --field "$field" --shard $shardno > got || fail "cat $key.$field"
        cmp -s expect got || fail "$s: $key.$field differs"
    done
    shardno=$((shardno + 1))
done

# Bit flip in one member: verify must name it.
line=$("$IM" list m.ingot | awk '$1 == "shard-gnu.tar" && $2 == "s7.bin"')
off=$(echo "$line" | awk '{print $4}')
# Invert the byte (writing a constant would change nothing when the random byte already held it).
byte=$(od -An -tu1 -j $((off + 3)) -N1 shard-gnu.tar | tr -d ' ')
printf "\\$(printf '%03o' $((255 - byte)))" | dd of=shard-gnu.tar bs=1 seek=$((off + 3)) conv=notrunc 2>/dev/null
[ "$(od -An -tu1 -j $((off + 3)) -N1 shard-gnu.tar | tr -d ' ')" = $((255 - byte)) ] || fail "bit flip"
if "$IM" verify m.ingot > verify.out 2>/dev/null; then fail "verify passed a flipped shard"; fi
grep -q "key 's7' shard shard-gnu.tar field bin offset $off" verify.out || { cat verify.out; fail "verify did not name s7"; }
grep -q "1 bad samples, 1 bad shards" verify.out || { cat verify.out; fail "verify summary"; }

# A truncated shard is an error naming the file and offset.
head -c 5000 shard-pax.tar > trunc.tar
if "$IM" build trunc.tar -o t.ingot 2> err.out; then fail "build accepted a truncated tar"; fi
grep -q "trunc.tar: offset [0-9]*: truncated" err.out || { cat err.out; fail "truncation message"; }
echo "ok"
