#!/usr/bin/python3
"""The Python binding's side of the loader benchmark (tests/perf/loader_perf.sh, section python):
one epoch of ingot.Loader on one rank, each batch imported as a trainer would (torch.from_dlpack
of the data, the lengths and the labels: no copy) and dropped. Counted as ingot-bench counts
(samples and wall time after the first step), with the same loader defaults (depth 4, threads
and verification from INGOT_*). Prints JSON with samples/s.

With --overhead: the binding's own cost per batch instead, with the pipeline kept ahead (a 5 ms
sleep as the trainer's step): the time in next() (the hand-over through the wait thread) and in
three torch.from_dlpack imports plus dropping the batch, medians over 55 batches.

usage: PYTHONPATH=build/python python_bench.py MANIFEST --batch N [--overhead]
"""
import json
import statistics
import sys
import time

import torch

import ingot


def overhead(loader):
    it, nexts, imports = iter(loader), [], []
    for i in range(60):
        time.sleep(0.005)  # the trainer's step: the pipeline is ahead, next() only hands over
        t0 = time.perf_counter()
        b = next(it)
        t1 = time.perf_counter()
        data, lengths, labels = (torch.from_dlpack(b), torch.from_dlpack(b.lengths),
                                 torch.from_dlpack(b.labels))
        del data, lengths, labels, b
        t2 = time.perf_counter()
        if i >= 5:  # the pipeline's fill stays out
            nexts.append(t1 - t0)
            imports.append(t2 - t1)
    return {"next_p50_us": statistics.median(nexts) * 1e6,
            "import_drop_p50_us": statistics.median(imports) * 1e6}


def main():
    manifest = sys.argv[1]
    batch = int(sys.argv[sys.argv.index("--batch") + 1])
    ingot.init()
    if "--overhead" in sys.argv:
        loader = ingot.Loader(manifest, batch, seed=1, device="cpu")
        print(json.dumps(overhead(loader)))
        loader.close()
        ingot.finalize()
        return
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
