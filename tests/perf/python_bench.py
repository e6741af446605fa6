#!/usr/bin/python3
"""The Python binding's side of the loader benchmark (tests/perf/loader_perf.sh, section python):
one epoch of ingot.Loader on one rank, each batch imported as a trainer would (torch.from_dlpack
of the data, the lengths and the labels: no copy) and dropped. Counted as ingot-bench counts
(samples and wall time after the first step), with the same loader defaults (depth 4, threads
and verification from INGOT_*). Prints JSON with samples/s.

usage: PYTHONPATH=build/python python_bench.py MANIFEST --batch N
"""
import json
import sys
import time

import torch

import ingot


def main():
    manifest = sys.argv[1]
    batch = int(sys.argv[sys.argv.index("--batch") + 1])
    ingot.init()
    loader = ingot.Loader(manifest, batch, seed=1, device="cpu")
    n, t0 = 0, None
    for b in loader:
        data = torch.from_dlpack(b)
        lengths, labels = torch.from_dlpack(b.lengths), torch.from_dlpack(b.labels)
        if t0 is None:
            t0 = time.perf_counter()  # the first step (pipeline fill) is excluded
        else:
            n += labels.shape[0]
        del data, lengths, labels, b
    dt = time.perf_counter() - t0
    loader.close()
    print(json.dumps({"samples": n, "seconds": dt, "samples_per_s": n / dt,
                      "torch": torch.__version__}))
    ingot.finalize()


if __name__ == "__main__":
    main()
