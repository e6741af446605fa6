#!/usr/bin/python3
"""The peers of the vision benchmark (tests/perf/vision_bench.sh), on the same ImageFolder:

  vision_peers.py dali  ROOT THREADS REPS [--batch 256]   (run with the venv's python)
  vision_peers.py torch ROOT WORKERS REPS [--batch 256]   (Debian's /usr/bin/python3)

The same work as ingot's transform: decode, RandomResizedCrop(224) with torchvision's scale and
ratio, a random horizontal flip, normalise with ImageNet's mean and std to float32 [C, H, W].
  dali:  fn.readers.file -> fn.decoders.image(device="cpu") -> fn.random_resized_crop ->
         fn.crop_mirror_normalize(mirror=fn.random.coin_flip()), a CPU-only pipeline
         (device_id=None) of THREADS threads, files read from the page cache;
  torch: torchvision.datasets.ImageFolder (PIL decode) + transforms.RandomResizedCrop(224),
         RandomHorizontalFlip, ToTensor, Normalize, in a DataLoader with WORKERS worker
         processes (0: in the main process), torch.set_num_threads(1).
One epoch per repetition after a warm-up of a few batches; prints "RESULT name median min max
images/s" like perf_vision, then the CPU time the pipeline spent per image over the same epochs
(every thread of the process, and the DataLoader's worker processes): a figure the load of other
processes on a shared machine moves far less than the wall-clock rate.
"""
import argparse
import statistics
import sys
import time

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
SIDE = 224
WARM_BATCHES = 3


def cpu_seconds(pids=()):
    """CPU time (user + system) of this process's threads and of the processes @p pids."""
    import os
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in ("self", *pids):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def count_images(root):
    import os
    return sum(len(f) for _, _, f in os.walk(root))


def dali(a):
    import nvidia.dali as dl
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types

    @dl.pipeline_def(batch_size=a.batch, num_threads=a.threads, device_id=None,
                     prefetch_queue_depth=2)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=a.root, random_shuffle=True, name="r")
        img = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
        img = fn.random_resized_crop(img, size=(SIDE, SIDE), random_area=(0.08, 1.0),
                                     random_aspect_ratio=(3 / 4, 4 / 3))
        img = fn.crop_mirror_normalize(img, dtype=types.FLOAT, output_layout="CHW",
                                       mean=[m * 255 for m in MEAN], std=[s * 255 for s in STD],
                                       mirror=fn.random.coin_flip())
        return img, labels

    p = pipe()
    p.build()
    n = count_images(a.root)
    steps = n // a.batch
    for _ in range(WARM_BATCHES):
        p.run()
    rates, cpu = [], []
    for _ in range(a.reps):
        t0, c0 = time.perf_counter(), cpu_seconds()
        for _ in range(steps):
            p.run()
        rates.append(steps * a.batch / (time.perf_counter() - t0))
        cpu.append((cpu_seconds() - c0) * 1e6 / (steps * a.batch))
    print("# DALI %s, %d images, batch %d, %d threads" % (dl.__version__, n, a.batch, a.threads))
    return rates, cpu


def torch(a):
    import torch as th
    import torchvision
    from torchvision import datasets, transforms
    th.set_num_threads(1)
    tf = transforms.Compose([transforms.RandomResizedCrop(SIDE), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    ds = datasets.ImageFolder(a.root, transform=tf)
    dl = th.utils.data.DataLoader(ds, batch_size=a.batch, shuffle=True, num_workers=a.threads,
                                  drop_last=True, persistent_workers=a.threads > 0)
    rates, cpu = [], []
    it = iter(dl)
    for _, _ in zip(range(min(WARM_BATCHES, len(dl) - 1)), it):
        pass
    workers = [w.pid for w in getattr(it, "_workers", [])]  # persistent: the same processes
    del it
    for _ in range(a.reps):
        t0, c0 = time.perf_counter(), cpu_seconds(workers)
        k = 0
        for x, _ in dl:
            k += x.shape[0]
        rates.append(k / (time.perf_counter() - t0))
        cpu.append((cpu_seconds(workers) - c0) * 1e6 / k)
    print("# torchvision %s (torch %s), PIL, %d images, batch %d, %d workers"
          % (torchvision.__version__, th.__version__, len(ds), a.batch, a.threads))
    return rates, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("peer", choices=["dali", "torch"])
    ap.add_argument("root")
    ap.add_argument("threads", type=int)
    ap.add_argument("reps", type=int)
    ap.add_argument("--batch", type=int, default=256)
    a = ap.parse_args()
    rates, cpu = dali(a) if a.peer == "dali" else torch(a)
    for name, v, unit in (("", sorted(rates), "images/s"), ("_cpu", sorted(cpu), "CPU-us/image")):
        print("RESULT %s%s_t%d %.1f %.1f %.1f %s"
              % (a.peer, name, a.threads, statistics.median(v), v[0], v[-1], unit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
