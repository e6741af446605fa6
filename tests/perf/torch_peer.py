#!/usr/bin/python3
"""PyTorch DataLoader peer for the loader benchmark (Debian's python3-torch).

Reads the same samples ingot reads, either as individual files (a map-style Dataset) or from
the same tar shards (an IterableDataset split over workers, as WebDataset does), with
num_workers = cores and pin_memory when CUDA is available. Prints samples/s of --epochs epochs
(default 1; the workers persist between them), the first batch excluded, as JSON.
usage: torch_peer.py files DIR --batch BATCH [--epochs E] | tar SHARD... --batch BATCH [--epochs E]
"""
import json, os, sys, tarfile, time
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info


class Files(Dataset):
    def __init__(self, root):
        self.paths = sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith(".bin"))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)


class Tars(IterableDataset):
    def __init__(self, shards):
        self.shards = shards

    def __iter__(self):
        info = get_worker_info()
        mine = self.shards if info is None else self.shards[info.id::info.num_workers]
        for shard in mine:
            with tarfile.open(shard, "r|") as tar:
                for m in tar:
                    if m.isfile() and m.name.endswith(".bin"):
                        yield torch.frombuffer(bytearray(tar.extractfile(m).read()),
                                               dtype=torch.uint8)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    batch = int(args[args.index("--batch") + 1])
    epochs = int(args[args.index("--epochs") + 1]) if "--epochs" in args else 1
    data = Files(args[0]) if mode == "files" else Tars([a for a in args if a.endswith(".tar")])
    workers = os.cpu_count()
    loader = DataLoader(data, batch_size=batch, num_workers=workers, shuffle=(mode == "files"),
                        pin_memory=torch.cuda.is_available(), drop_last=True,
                        persistent_workers=True)
    n, t0 = 0, None
    for _ in range(epochs):
        for b in loader:
            if t0 is None:
                t0 = time.perf_counter()  # the first batch (worker start-up) is excluded
                continue
            n += b.shape[0]
    dt = time.perf_counter() - t0
    print(json.dumps({"mode": mode, "epochs": epochs, "samples": n, "seconds": dt,
                      "samples_per_s": n / dt, "workers": workers, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
