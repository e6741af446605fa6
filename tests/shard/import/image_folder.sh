#!/bin/bash
# ingot-manifest pack --labels-from-dirs (torchvision's ImageFolder, issue 26):
#   1. classes sorted bytewise (upper case first, as Python's sorted()), every image labelled
#      with its class index, nested folders taking their top folder's class, files in the root
#      ignored (and said so), the names in DIR/classes.txt and shown by `inspect` with their
#      counts; torchvision's own ImageFolder gives the same classes and labels (when
#      python3-torchvision is installed; a failure without it where TEST_REQUIRE_TORCHVISION=1,
#      as in setup.sh's trees);
#   2. each rule's refusal, naming the path and the way out, with nothing packed: a file that is
#      not an image (then --skip-non-images), a class folder without images (then
#      --allow-empty-classes keeps its index), two images with one key, no class folder at all,
#      the flags without --labels-from-dirs, two roots.
# usage: image_folder.sh INGOT_MANIFEST WORK_DIR
set -u
tool=$1; work=$2/image-folder-test
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/out" ] && cat "$work/out"; exit 1; }
img() { mkdir -p "$(dirname "$1")"; printf 'P5 1 1 255\n%s' "$2" > "$1"; }  # 1x1 PNM bytes

root=$work/train
img "$root/b_cat/1.jpg" a; img "$root/b_cat/2.PNG" b
img "$root/a_dog/x.jpeg" c
img "$root/c_bird/nested/deep/y.ppm" d; img "$root/c_bird/z.jpg" e
img "$root/Zebra/q.jpg" f                       # 'Z' sorts before 'a'
echo "not a class" > "$root/README.txt"           # in no class: ignored

# 1. labels and class names
"$tool" pack "$root" -o "$work/p" --labels-from-dirs > "$work/out" 2>&1 || fail "pack"
grep -q "packed 6 samples of 4 classes into 1 shards" "$work/out" || fail "summary"
grep -q "ignored 1 files directly in $root" "$work/out" || fail "root file note"
printf 'Zebra\na_dog\nb_cat\nc_bird\n' | cmp -s - "$work/p/classes.txt" || fail "classes.txt"
"$tool" list "$work/p/manifest.ingot" > "$work/list" || fail "list"
for want in "Zebra/q.jpg 0" "a_dog/x.jpeg 1" "b_cat/1.jpg 2" "b_cat/2.PNG 2" \
            "c_bird/nested/deep/y.ppm 3" "c_bird/z.jpg 3"; do
    name=${want% *}; label=${want##* }
    grep -Eq "^shard-000000.tar ${name} [0-9]+ [0-9]+ ${label}\$" "$work/list" ||
        fail "$name: not labelled $label: $(grep "$name" "$work/list")"
done
[ "$(grep -c '\.cls ' "$work/list")" = 6 ] || fail "one cls member per image"
"$tool" inspect "$work/p/manifest.ingot" > "$work/out" || fail "inspect"
grep -q "^classes       4 ($work/p/classes.txt)" "$work/out" || fail "inspect: classes"
grep -Eq "^ +2 b_cat +2 samples" "$work/out" || fail "inspect: class counts"
py=${TEST_PYTHON:-/usr/bin/python3}
if "$py" -c "import torchvision" 2> "$work/torchvision.err"; then
    "$py" - "$root" "$work/list" << 'PY' || fail "torchvision's ImageFolder disagrees"
import sys
from torchvision.datasets import ImageFolder
ds = ImageFolder(sys.argv[1], loader=lambda p: p)
ours = {}
for line in open(sys.argv[2]):
    shard, member, _, _, label = line.split()
    if not member.endswith(".cls"):
        ours[member] = int(label)
theirs = {p[len(sys.argv[1]) + 1:]: y for p, y in ds.samples}
assert ds.classes == ["Zebra", "a_dog", "b_cat", "c_bird"], ds.classes
assert ours == theirs, (ours, theirs)
print("torchvision's ImageFolder: the same %d classes and %d labels" % (len(ds.classes), len(ours)))
PY
elif [ "${TEST_REQUIRE_TORCHVISION:-0}" = 1 ]; then # setup.sh's trees: it installs it
    cat "$work/torchvision.err"
    fail "torchvision is required here (INGOT_TEST_REQUIRE_TORCHVISION) and $py cannot import it"
else
    echo "note: python3-torchvision not installed: the comparison with ImageFolder is left out"
fi

# 2. the rules' refusals
refused() { # refused MESSAGE ARGS...: exit 1, the message, no manifest
    local msg=$1; shift
    rm -rf "$work/r"
    "$tool" pack "$@" -o "$work/r" > "$work/out" 2>&1; rc=$?
    [ $rc = 1 ] || [ $rc = 2 ] || fail "pack $*: exit $rc, expected a refusal"
    grep -qF -- "$msg" "$work/out" || fail "pack $*: no '$msg'"
    [ ! -e "$work/r/manifest.ingot" ] || fail "pack $*: a manifest was written"
}
echo "notes" > "$root/b_cat/notes.txt"
refused "$root/b_cat/notes.txt: not an image (an image's name ends in .jpg, .jpeg, .png, .ppm, .pgm or .pnm, any case): move it out of the class folder, or pass --skip-non-images" \
    "$root" --labels-from-dirs
"$tool" pack "$root" -o "$work/s" --labels-from-dirs --skip-non-images > "$work/out" 2>&1 ||
    fail "--skip-non-images"
grep -q "left out 1 files that are not images" "$work/out" || fail "skip note"
rm "$root/b_cat/notes.txt"
mkdir -p "$root/d_empty/sub"; echo x > "$root/d_empty/sub/readme.md"
refused "$root/d_empty/sub/readme.md: not an image" "$root" --labels-from-dirs
refused "$root/d_empty: class folder without images (class 4 of 5): remove it, add images, or pass --allow-empty-classes" \
    "$root" --labels-from-dirs --skip-non-images
rm -rf "$work/e"
"$tool" pack "$root" -o "$work/e" --labels-from-dirs --skip-non-images --allow-empty-classes \
    > "$work/out" 2>&1 || fail "--allow-empty-classes"
grep -q "1 classes have no image (--allow-empty-classes)" "$work/out" || fail "empty note"
tail -1 "$work/e/classes.txt" | grep -qx d_empty || fail "the empty class keeps its index"
rm -rf "$root/d_empty"
img "$root/a_dog/x.png" g
refused "two images with one key 'a_dog/x'" "$root" --labels-from-dirs
rm "$root/a_dog/x.png"
mkdir -p "$work/flat"; img "$work/flat/1.jpg" h
refused "no class folder: an ImageFolder is ROOT/<class>/<image>" "$work/flat" --labels-from-dirs
refused "--skip-non-images and --allow-empty-classes go with --labels-from-dirs" "$root" \
    --skip-non-images
refused "--labels-from-dirs takes one ROOT" "$root" "$root" --labels-from-dirs
echo "image_folder: ok"
