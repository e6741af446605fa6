#!/usr/bin/python3
"""Fashion-MNIST as JPEG files in torchvision's ImageFolder layout, made with Pillow:

  fashion_mnist_jpeg.py OUT [--idx DIR] [--quality Q] [--limit N] [--jobs J]

writes OUT/train/<k>-<name>/<n>.jpg (60,000) and OUT/test/<k>-<name>/<n>.jpg (10,000): 28x28
grayscale JPEGs (quality 90 by default) of the Debian package dataset-fashion-mnist's idx files.
The class folders sort in label order ("0-t-shirt" ... "9-ankle-boot"), so packing each split
with `ingot-manifest pack OUT/train -o DIR --labels-from-dirs` gives every image its original
label; then `ingot-train --decode` trains on them (docs/vision.md). --limit keeps the first N
images of each split (the CI test's subset).
"""
import argparse
import gzip
import os
import sys
from multiprocessing import Pool

import numpy as np
from PIL import Image

CLASSES = ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker",
           "bag", "ankle-boot"]
IDX = "/usr/share/datasets/fashion-mnist"
SPLITS = {"train": "train", "test": "t10k"}


def read_idx(path, images):
    with gzip.open(path, "rb") as f:
        data = f.read()
    if images:
        n, rows, cols = (int.from_bytes(data[i:i + 4], "big") for i in (4, 8, 12))
        return np.frombuffer(data, np.uint8, offset=16).reshape(n, rows, cols)
    return np.frombuffer(data, np.uint8, offset=8)


def save(job):
    path, pixels, quality = job
    Image.fromarray(pixels, mode="L").save(path, quality=quality)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--idx", default=IDX)
    ap.add_argument("--quality", type=int, default=90)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    for split, prefix in SPLITS.items():
        x = read_idx(os.path.join(a.idx, f"{prefix}-images-idx3-ubyte.gz"), True)
        y = read_idx(os.path.join(a.idx, f"{prefix}-labels-idx1-ubyte.gz"), False)
        n = min(len(x), a.limit) if a.limit else len(x)
        dirs = [os.path.join(a.out, split, f"{k}-{c}") for k, c in enumerate(CLASSES)]
        for d in dirs:
            os.makedirs(d, exist_ok=True)
        jobs = [(os.path.join(dirs[y[i]], f"{i:05d}.jpg"), x[i], a.quality) for i in range(n)]
        with Pool(a.jobs) as p:
            p.map(save, jobs, chunksize=256)
        print(f"{split}: {n} JPEGs (quality {a.quality}) in {os.path.join(a.out, split)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
