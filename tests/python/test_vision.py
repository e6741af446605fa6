"""ingot.ImageTransform's decode and augment options (ctest python.binding.vision), on an ImageFolder of
JPEGs made with Pillow and packed with `ingot-manifest pack --labels-from-dirs`:
  - decode=True, crop='none', uint8 HWC at each image's own size: Pillow's decode, pixel for
    pixel (both are libjpeg-turbo with its defaults);
  - crop='center' against torchvision's Resize(256) + CenterCrop(224) with Pillow (the same
    geometry and filter: a mean difference under one grey level), when torchvision is there
    (a failure without it where TEST_REQUIRE_TORCHVISION=1, as in setup.sh's trees);
  - crop='random': float32 [n, 3, H, W], labels the folders' indices, two loaders with one seed
    identical, two epochs different;
  - bad options named (a scale that cannot be satisfied, a decode option without decode, an
    unknown crop, uint8 without decode, 5 channels), and a truncated JPEG failing its step with
    the shard, key and offset named.

usage: test_vision.py INGOT_MANIFEST_TOOL WORKDIR
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import SKIP, expect_error, require_torch  # noqa: E402

CLASSES = 4
PER_CLASS = 8
SIZES = [(96, 72), (72, 96), (120, 90), (64, 64)]


def make_folder(root):
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(26)
    paths = []
    for c in range(CLASSES):
        os.makedirs(os.path.join(root, f"class{c}"), exist_ok=True)
        for i in range(PER_CLASS):
            w, h = SIZES[(c + i) % len(SIZES)]
            x = np.linspace(0, 255, w)[None, :, None] * np.ones((h, 1, 3))
            img = x * rng.uniform(0.3, 1, 3) + rng.normal(0, 20, (h, w, 3))
            p = os.path.join(root, f"class{c}", f"{i:03d}.jpg")
            Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(p, quality=90)
            paths.append(p)
    return paths


def pack(tool, root, out):
    subprocess.run([tool, "pack", root, "-o", out, "--labels-from-dirs"], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(out, "manifest.ingot")


def by_key(ingot, torch, manifest, tf, batch, epochs=1, seed=3):
    """{(epoch, key): (label, tensor)} of every sample delivered."""
    out = {}
    with ingot.Loader(manifest, batch, transform=tf, device="cpu", seed=seed,
                      epochs=epochs) as loader:
        for _ in range(epochs):  # one `for` per epoch
            for b in loader:
                x = torch.from_dlpack(b).clone()  # the export itself is dropped at once
                labels = torch.from_dlpack(b.labels).tolist()
                for i, key in enumerate(b.keys):
                    out[(b.epoch, key)] = (labels[i], x[i])
                del b
    return out


def check_pillow_decode(ingot, torch, tool, work, paths):
    import numpy as np
    from PIL import Image
    for w, h in SIZES:  # one dataset per size: crop='none' at the image's own size is the decode
        root = os.path.join(work, f"size{w}x{h}")
        for p in paths:
            if Image.open(p).size == (w, h):
                dst = os.path.join(root, os.path.relpath(p, os.path.dirname(os.path.dirname(p))))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(p, dst)
        m = pack(tool, root, root + "-packed")
        tf = ingot.ImageTransform((3, h, w), decode=True, crop="none", dtype="uint8",
                                  layout="HWC")
        assert tf.shape == (h, w, 3) and tf.dtype == "uint8", (tf.shape, tf.dtype)
        got = by_key(ingot, torch, m, tf, 2)
        for (_, key), (_, x) in got.items():
            ref = np.asarray(Image.open(os.path.join(root, key + ".jpg")).convert("RGB"))
            assert x.dtype == torch.uint8 and tuple(x.shape) == (h, w, 3), x.shape
            assert np.array_equal(x.numpy(), ref), f"{key}: differs from Pillow's decode"
    print("crop='none', uint8 HWC: Pillow's decode pixel for pixel")


def check_center_crop(ingot, torch, manifest, folder):
    try:
        from torchvision import transforms
    except ImportError as e:
        # setup.sh installs python3-torchvision and configures INGOT_TEST_REQUIRE_TORCHVISION
        if os.environ.get("TEST_REQUIRE_TORCHVISION") == "1":
            raise AssertionError(f"torchvision is required (INGOT_TEST_REQUIRE_TORCHVISION): {e}")
        print(f"note: torchvision not importable ({e}): the center crop is not compared")
        return
    from PIL import Image
    side, resize = 48, 56
    tv = transforms.Compose([transforms.Resize(resize), transforms.CenterCrop(side),
                             transforms.PILToTensor()])
    tf = ingot.ImageTransform((3, side, side), decode=True, crop="center", resize=resize,
                              dtype="uint8")
    diffs = []
    for (_, key), (_, x) in by_key(ingot, torch, manifest, tf, 8).items():
        ref = tv(Image.open(os.path.join(folder, key + ".jpg")).convert("RGB"))
        diffs.append((x.float() - ref.float()).abs().mean().item())
    assert max(diffs) < 1.0, diffs
    print("crop='center' vs torchvision Resize(%d) + CenterCrop(%d): mean |diff| at most %.2f"
          % (resize, side, max(diffs)))


def check_random(ingot, torch, manifest):
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    tf = ingot.ImageTransform((3, 32, 32), decode=True, crop="random", mean=mean, std=std)
    assert tf.shape == (3, 32, 32) and tf.dtype == "float32"
    a = by_key(ingot, torch, manifest, tf, 8, epochs=2)
    b = by_key(ingot, torch, manifest, tf, 8, epochs=2)
    assert len(a) == 2 * CLASSES * PER_CLASS
    for (epoch, key), (label, x) in a.items():
        assert label == int(key[len("class")]), (key, label)
        assert x.dtype == torch.float32 and tuple(x.shape) == (3, 32, 32)
        assert torch.equal(x, b[(epoch, key)][1]), f"{key}: two runs differ"
    differ = sum(not torch.equal(a[(0, k)][1], a[(1, k)][1]) for (e, k) in a if e == 0)
    assert differ >= CLASSES * PER_CLASS - 2, differ
    print("crop='random': labels from the folders, two runs identical, epochs differ (%d of %d)"
          % (differ, CLASSES * PER_CLASS))


def check_errors(ingot, torch, tool, work, paths):
    E = "INGOT_ERR_INVALID_PARAM"
    expect_error(lambda: ingot.ImageTransform((3, 8, 8), decode=True, scale=(0.5, 0.1)), E,
                 "scale (0.5, 0.1) cannot be satisfied")
    expect_error(lambda: ingot.ImageTransform((3, 8, 8), scale=(0.1, 0.5)), E,
                 "ImageTransform(scale=...): a decode option; pass decode=True")
    expect_error(lambda: ingot.ImageTransform((3, 8, 8), crop="bogus"), E,
                 "ImageTransform(crop='bogus'): expected one of 'random', 'center', 'none'")
    expect_error(lambda: ingot.ImageTransform((3, 8, 8), dtype="uint8"), E,
                 "ImageTransform(dtype=uint8): expected float32, or uint8 with decode=True")
    expect_error(lambda: ingot.ImageTransform((4, 8, 8), decode=True), E,
                 "4 channels with decode: expected 1 (gray) or 3 (RGB)")
    root = os.path.join(work, "bad")
    shutil.copytree(os.path.dirname(os.path.dirname(paths[0])), root)
    victim = os.path.join(root, "class2", "003.jpg")
    data = open(victim, "rb").read()
    open(victim, "wb").write(data[:len(data) // 2])
    m = pack(tool, root, root + "-packed")
    tf = ingot.ImageTransform((3, 16, 16), decode=True, crop="random")

    def run():
        with ingot.Loader(m, 8, transform=tf, device="cpu") as loader:
            for b in loader:
                del b
    e = expect_error(run, "INGOT_ERR_FORMAT", "key 'class2/003'",
                     "shard 'shard-000000.tar' at offset", "no end-of-image marker")
    print("bad input named:", e.message[:160], "...")


def main():
    require_torch()
    try:
        import PIL  # noqa: F401
    except ImportError:
        print("SKIP: Pillow is not installed (Debian: python3-pil)")
        sys.exit(SKIP)
    import torch
    import ingot
    tool, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    folder = os.path.join(work, "folder")
    paths = make_folder(folder)
    ingot.init()
    manifest = pack(tool, folder, os.path.join(work, "packed"))
    check_pillow_decode(ingot, torch, tool, work, paths)
    check_center_crop(ingot, torch, manifest, folder)
    check_random(ingot, torch, manifest)
    check_errors(ingot, torch, tool, work, paths)
    ingot.finalize()
    shutil.rmtree(work, ignore_errors=True)
    print("python vision: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
