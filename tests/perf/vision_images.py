#!/usr/bin/python3
"""ImageNet-like JPEGs for the vision benchmark (tests/perf/vision_bench.sh), made with Pillow.

  vision_images.py OUT_DIR [--images N] [--classes K] [--seed S] [--jobs J]

Writes OUT_DIR/train/cNNN/NNNNNN.JPEG, torchvision's ImageFolder layout. ImageNet's photos are
not here, so each image is synthesised to have what makes a photo cost what it costs to decode:
a 1/f amplitude spectrum (natural scenes' statistics: smooth regions, soft and sharp edges at
every scale), correlated colour channels, a few solid shapes with hard edges, and sensor-like
noise; sizes drawn around ImageNet's common shapes (500x375 on average, portrait and landscape);
saved at quality 90 with 4:2:0 chroma (Pillow's default, as most camera JPEGs). The mean file
size is printed: ImageNet's training JPEGs average about 110 KB.
"""
import argparse
import os
import sys
from multiprocessing import Pool

import numpy as np
from PIL import Image, ImageDraw

SHAPES = [(500, 375), (375, 500), (500, 333), (333, 500), (500, 400), (640, 480), (400, 300),
          (500, 500), (448, 336)]
QUALITY = 90
SPECTRUM_EXPONENT = 1.0  # amplitude ~ 1/f^a: 1 for natural images


def pink_noise(rng, h, w):
    fy = np.fft.fftfreq(h)[:, None]
    fx = np.fft.rfftfreq(w)[None, :]
    f = np.sqrt(fx * fx + fy * fy)
    f[0, 0] = 1.0
    amp = 1.0 / f ** SPECTRUM_EXPONENT
    amp[0, 0] = 0.0
    phase = rng.uniform(0, 2 * np.pi, amp.shape)
    x = np.fft.irfft2(amp * np.exp(1j * phase), s=(h, w))
    return (x - x.mean()) / (x.std() + 1e-9)


def make(args):
    path, seed = args
    rng = np.random.default_rng(seed)
    w, h = SHAPES[rng.integers(len(SHAPES))]
    base = [pink_noise(rng, h, w) for _ in range(3)]
    mix = rng.normal(0, 1, (3, 3)) * 0.35 + np.eye(3)  # correlated channels
    img = np.stack([sum(mix[c, k] * base[k] for k in range(3)) for c in range(3)], axis=-1)
    img = 128 + img * rng.uniform(30, 55) + rng.uniform(-40, 40, 3)
    pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(pil)
    for _ in range(rng.integers(2, 7)):  # objects with hard edges
        x0, y0 = rng.integers(0, w), rng.integers(0, h)
        x1, y1 = x0 + rng.integers(20, w // 2), y0 + rng.integers(20, h // 2)
        fill = tuple(int(v) for v in rng.integers(0, 256, 3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)([x0, y0, x1, y1], fill=fill)
    arr = np.asarray(pil).astype(np.float32) + rng.normal(0, 3.0, (h, w, 3))  # sensor noise
    Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).save(path, quality=QUALITY)
    return os.path.getsize(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--images", type=int, default=5120)
    ap.add_argument("--classes", type=int, default=16)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    jobs = []
    for i in range(a.images):
        d = os.path.join(a.out, "train", "c%03d" % (i % a.classes))
        os.makedirs(d, exist_ok=True)
        jobs.append((os.path.join(d, "%06d.JPEG" % i), a.seed * 1000003 + i))
    with Pool(a.jobs) as p:
        sizes = p.map(make, jobs, chunksize=16)
    print("%d images in %d classes under %s/train: mean %.1f KB, total %.1f MB"
          % (len(sizes), a.classes, a.out, np.mean(sizes) / 1000, sum(sizes) / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
