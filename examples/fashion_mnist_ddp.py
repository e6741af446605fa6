#!/usr/bin/python3
"""Fashion-MNIST with PyTorch DistributedDataParallel, fed by ingot.Loader, or, for comparison,
by torch.utils.data.DataLoader over the same tar shards (--loader torch). The model and the
hyper-parameters are ingot-train's MLP (docs/train.md): 784-128-10 with ReLU, Xavier-uniform
weights and zero biases from the seed, SGD with momentum 0.9 at 0.05, a global batch of 256,
pixels normalised with the training images' mean and standard deviation.

  ingot-manifest pack --fashion-mnist -o fm-train --split train
  ingot-manifest pack --fashion-mnist -o fm-test  --split test
  mpirun -np 4 python examples/fashion_mnist_ddp.py \\
      --train fm-train/manifest.ingot --test fm-test/manifest.ingot [--loader torch]

Ranks come from ingot (--loader ingot) or from the launcher's environment (--loader torch:
OMPI_COMM_WORLD_*, SLURM_PROCID/SLURM_NTASKS or torchrun's RANK/WORLD_SIZE). The gradients go
through torch.distributed (gloo on the CPU, nccl when the model is on a GPU), whose rendezvous
is MASTER_ADDR:MASTER_PORT (default 127.0.0.1:29500; across nodes set MASTER_ADDR to the first
node, e.g. under Slurm `scontrol show hostnames "$SLURM_JOB_NODELIST" | head -1`).
Rank 0 prints a row per epoch (--json: one JSON object per line): loss, test accuracy, samples/s
and the share of the epoch spent waiting for data. --checkpoint DIR saves the model, the
optimiser and the loader's state_dict after every epoch; --resume continues from it exactly.
"""
import argparse
import glob
import json
import os
import tarfile
import time

import torch
import torch.distributed as dist
import torch.nn as nn

MEAN, STD = 0.2860, 0.3530  # training images, pixel / 255 (the same as ingot-train)
PIXELS = 28 * 28


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", required=True, help="training manifest (pack --split train)")
    p.add_argument("--test", required=True, help="test manifest (pack --split test)")
    p.add_argument("--loader", choices=("ingot", "torch"), default="ingot")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, default=256, help="global batch over all ranks")
    p.add_argument("--test-batch", type=int, default=1000, help="global test batch")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=2,
                   help="DataLoader workers per rank (--loader torch); ingot sizes its own")
    p.add_argument("--device", default="cpu", help="cpu or cuda (the rank's GPU)")
    p.add_argument("--checkpoint", help="directory for a checkpoint after every epoch")
    p.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    p.add_argument("--json", action="store_true", help="one JSON object per epoch")
    return p.parse_args()


# ---------------------------------------------------------------- ranks and the process group

def launcher_rank():
    """(rank, world) from the launcher's environment, for the DataLoader twin."""
    for r, w in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                 ("SLURM_PROCID", "SLURM_NTASKS"), ("RANK", "WORLD_SIZE")):
        if r in os.environ and w in os.environ:
            return int(os.environ[r]), int(os.environ[w])
    return 0, 1


def init_group(rank, world, device):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=rank,
                            world_size=world)


# ---------------------------------------------------------------- the model (ingot-train's MLP)

def make_model(hidden, seed):
    torch.manual_seed(seed)  # the same weights on every rank (DDP also broadcasts rank 0's)
    model = nn.Sequential(nn.Flatten(), nn.Linear(PIXELS, hidden), nn.ReLU(), nn.Linear(hidden, 10))
    for m in model:
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    return model


# ---------------------------------------------------------------- data: ingot

class IngotData:
    """ingot.Loader with its C image transform: batches arrive as float32 [n, 1, 28, 28]."""

    def __init__(self, args, device):
        import ingot
        self.ingot = ingot
        tf = ingot.ImageTransform((1, 28, 28), mean=MEAN, std=STD, field="pgm")
        where = "placement" if device.type == "cuda" else "cpu"
        self.train = ingot.Loader(args.train, args.batch, seed=args.seed, epochs=args.epochs,
                                  transform=tf, device=where)
        self.test = ingot.Loader(args.test, args.test_batch, seed=args.seed, epochs=args.epochs,
                                 transform=tf, device=where)

    def epoch(self, loader):
        for b in loader:  # one `for` per epoch
            x, y = torch.from_dlpack(b), torch.from_dlpack(b.labels)
            del b  # the tensors keep the slot; it goes back when they are dropped
            yield x, y

    def train_batches(self, epoch):
        return self.epoch(self.train)

    def test_batches(self):
        return self.epoch(self.test)

    def state_dict(self):
        return self.train.state_dict()  # collective: every rank calls it

    def load_state_dict(self, state):
        self.train.load_state_dict(state)


# ---------------------------------------------------------------- data: the DataLoader twin

class TarImages(torch.utils.data.Dataset):
    """The same tar shards: each sample's .pgm and .cls members, located once, read by offset."""

    def __init__(self, manifest):
        self.shards = sorted(glob.glob(os.path.join(os.path.dirname(manifest), "*.tar")))
        members = {}
        for s, path in enumerate(self.shards):
            with tarfile.open(path) as t:
                for m in t:
                    key, ext = os.path.splitext(m.name)
                    members.setdefault(key, {})[ext] = (s, m.offset_data, m.size)
        self.samples = [members[k] for k in sorted(members)]
        self.files = None

    def __len__(self):
        return len(self.samples)

    def read(self, where):
        s, off, size = where
        f = self.files[s]
        f.seek(off)
        return f.read(size)

    def __getitem__(self, i):
        if self.files is None:  # per worker process
            self.files = [open(p, "rb") for p in self.shards]
        pgm, cls = self.read(self.samples[i][".pgm"]), self.read(self.samples[i][".cls"])
        px = torch.frombuffer(bytearray(pgm[-PIXELS:]), dtype=torch.uint8)
        x = ((px.float() / 255 - MEAN) / STD).reshape(1, 28, 28)
        return x, int(cls)


class TorchData:
    def __init__(self, args, rank, world, device):
        if args.batch % world or args.test_batch % world:
            raise SystemExit(f"--batch {args.batch} and --test-batch {args.test_batch} must be "
                             f"multiples of the world size {world}")
        self.rank, self.world = rank, world
        kw = dict(num_workers=args.workers, pin_memory=device.type == "cuda",
                  persistent_workers=args.workers > 0)
        train, test = TarImages(args.train), TarImages(args.test)
        self.sampler = torch.utils.data.DistributedSampler(train, world, rank, shuffle=True,
                                                           seed=args.seed, drop_last=True)
        test_sampler = torch.utils.data.DistributedSampler(test, world, rank, shuffle=False)
        self.train = torch.utils.data.DataLoader(train, args.batch // world, sampler=self.sampler,
                                                 drop_last=True, **kw)
        self.test = torch.utils.data.DataLoader(test, args.test_batch // world,
                                                sampler=test_sampler, **kw)
        self.start_epoch = 0

    def train_batches(self, epoch):
        self.sampler.set_epoch(epoch)
        return iter(self.train)

    def test_batches(self):
        return iter(self.test)

    def state_dict(self):
        return {"epoch_done": True}  # the DataLoader resumes at epoch boundaries only

    def load_state_dict(self, state):
        pass


# ---------------------------------------------------------------- training

def evaluate(model, data, device):
    model.eval()
    correct = torch.zeros(2, dtype=torch.int64)  # [right, seen]
    with torch.no_grad():
        for x, y in data.test_batches():
            pred = model(x.to(device, non_blocking=True)).argmax(1).cpu()
            correct[0] += (pred == y).sum()
            correct[1] += y.numel()
    dist.all_reduce(correct)  # over the ranks
    model.train()
    total = int(correct[1])
    return int(correct[0]) / total if total else 0.0


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.set_num_threads(1)  # one thread per rank, as ingot-train's BLAS
    if args.loader == "ingot":
        import ingot
        ingot.init()  # MPI from the launcher (mpirun, srun)
        rank, world = ingot.rank(), ingot.world_size()
        if device.type == "cuda":
            device = torch.device(ingot.placement()["device"])
    else:
        rank, world = launcher_rank()
        if device.type == "cuda":
            device = torch.device("cuda", rank % torch.cuda.device_count())
    init_group(rank, world, device)
    data = IngotData(args, device) if args.loader == "ingot" else TorchData(args, rank, world,
                                                                            device)
    model = make_model(args.hidden, args.seed).to(device)
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=args.momentum)
    loss_fn = nn.CrossEntropyLoss()
    start = 0
    ckpt = os.path.join(args.checkpoint, "ckpt.pt") if args.checkpoint else None
    if args.resume and not ckpt:
        raise SystemExit("--resume needs --checkpoint DIR")
    if args.resume and not os.path.exists(ckpt) and rank == 0:
        # As a requeued Slurm job's first run: nothing to resume yet, so start afresh (said).
        print(f"# --resume: no checkpoint at {ckpt} yet: starting from epoch 1", flush=True)
    if args.resume and os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optim"])
        data.load_state_dict(state["loader"])
        start = state["epoch"] + 1
    if rank == 0 and not args.json:
        print(f"# {args.loader} loader, {world} ranks, global batch {args.batch}, "
              f"device {device}")
        print(f"{'epoch':>5} {'loss':>8} {'test acc':>9} {'samples/s':>10} {'data wait':>10}")
    for epoch in range(start, args.epochs):
        t0 = time.perf_counter()
        wait, n, loss_sum, steps = 0.0, 0, 0.0, 0
        batches = data.train_batches(epoch)
        while True:
            tw = time.perf_counter()
            xy = next(batches, None)
            wait += time.perf_counter() - tw
            if xy is None:
                break
            x, y = xy[0].to(device, non_blocking=True), xy[1].to(device, non_blocking=True)
            del xy
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(ddp(x), y)
            loss.backward()
            opt.step()
            loss_sum += float(loss)
            n += y.numel()
            steps += 1
            del x, y
        dt = time.perf_counter() - t0
        acc = evaluate(model, data, device)
        stats = torch.tensor([n, wait, dt, loss_sum / max(steps, 1)], dtype=torch.float64)
        dist.all_reduce(stats)  # samples summed; times and loss averaged below
        samples, wait_s, wall_s, loss_avg = (float(stats[0]), float(stats[1]) / world,
                                             float(stats[2]) / world, float(stats[3]) / world)
        loader_state = data.state_dict()  # collective
        if ckpt and rank == 0:
            os.makedirs(args.checkpoint, exist_ok=True)
            torch.save({"model": model.state_dict(), "optim": opt.state_dict(),
                        "loader": loader_state, "epoch": epoch}, ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
        if rank == 0:
            row = {"loader": args.loader, "world": world, "epoch": epoch + 1,
                   "loss": round(loss_avg, 4), "test_acc": round(acc, 4),
                   "samples_per_s": round(samples / wall_s, 1),
                   "data_wait_pct": round(100 * wait_s / wall_s, 2)}
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{row['epoch']:>5} {row['loss']:>8.4f} {100 * acc:>8.2f}% "
                      f"{row['samples_per_s']:>10,.0f} {row['data_wait_pct']:>9.1f}%",
                      flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
