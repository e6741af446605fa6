#!/usr/bin/python3
"""The cost of a Python transform in the binding (docs/python.md, "Transforms"): one loader
epoch over a Fashion-MNIST split with ingot.ImageTransform (C, in every worker, no GIL) and with
an ingot.Transform doing the same normalisation in numpy (one sample at a time under the GIL),
alternately, `repeats` times each. Prints samples/s of the whole loader and the per-sample
transform p50/p99 from loader.stats().

usage: PYTHONPATH=build/python /usr/bin/python3 tests/perf/python_transform.py \
           fm-test/manifest.ingot [repeats=3] [global_batch=500]
(pack the split first: build/apps/ingot-manifest pack --fashion-mnist -o fm-test --split test)
"""
import statistics
import sys
import time

import numpy as np

import ingot

MEAN, STD = 0.2860, 0.3530
HEADER = len(b"P5 28 28 255\n")


def normalise(sample):
    px = np.frombuffer(sample["pgm"], dtype=np.uint8, offset=HEADER).astype(np.float32)
    return (px / 255 - MEAN) / STD


def epoch(manifest, batch, tf):
    loader = ingot.Loader(manifest, batch, seed=1, device="cpu", transform=tf)
    t0, n = time.perf_counter(), 0
    for b in loader:
        n += b.count
        del b
    dt = time.perf_counter() - t0
    s = loader.stats()
    loader.close()
    return n / dt, s["transform_p50_ns"], s["transform_p99_ns"], s["workers"]


def main():
    manifest = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    ingot.init()
    kinds = {"ImageTransform (C)": ingot.ImageTransform((1, 28, 28), mean=MEAN, std=STD,
                                                        field="pgm"),
             "Transform (numpy)": ingot.Transform(normalise, (784,), "float32")}
    runs = {k: [] for k in kinds}
    for _ in range(repeats):
        for k, tf in kinds.items():
            runs[k].append(epoch(manifest, batch, tf))
    print(f"| transform | samples/s (median of {repeats}) | min | max | per sample p50 | p99 "
          f"| workers |")
    print("|---|---|---|---|---|---|---|")
    for k, r in runs.items():
        rates = [x[0] for x in r]
        p50 = statistics.median(x[1] for x in r) / 1000
        p99 = statistics.median(x[2] for x in r) / 1000
        print(f"| {k} | {statistics.median(rates):,.0f} | {min(rates):,.0f} | {max(rates):,.0f} "
              f"| {p50:.1f} us | {p99:.1f} us | {r[0][3]} |")
    ingot.finalize()


if __name__ == "__main__":
    main()
