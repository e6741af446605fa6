#!/usr/bin/python3
"""What the locality order (INGOT_ORDER=window:N[,nodes:C]) costs a model, by hand, on Fashion-MNIST.

Packs the training split into shards of --shard-size (ingot-manifest pack --fashion-mnist) and
a copy of it with the samples sorted by label into shards of the same sizes (what a dataset
packed class by class, e.g. an ImageFolder, looks like: the locality order's worst case), then
for each dataset and order (full, window:N..., window:N,nodes:C for each of --nodes, and
shards:N,nodes:C: the cheaper design of issue 31, each rank reading whole shards of its node's
window, statistics only):
  - the spread of labels per global batch (tests/perf/order_spread.c): distinct labels, the
    largest class's share, the total variation distance to the dataset's label histogram, and
    the shards a batch reads; the same per rank's slice (--world ranks, node by node);
  - ingot-train's test accuracy (--model, --epochs, 2 ranks) reading through that order.
The order is the same from files or from a bucket (the loader's order does not depend on the
storage), so the training reads files here; e2e.py's train case checks bucket == files. The
dealt order depends on C, not on where the ranks run; under tests/netns/nodes.sh (2 emulated
nodes of one rank each) the training runs across them.

usage: tests/perf/order_cost.py [--build build] [--windows 1 2 4] [--nodes 2] [--world 4]
                                [--epochs 3] [--model mlp] [--batch 256] [--shard-size 4MiB]
                                [--json FILE]
       tests/netns/nodes.sh /tmp/n 1,1 -- tests/perf/order_cost.py --build build ...
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time


def sorted_copy(src, dst, tool):
    """The shards of @src with their samples sorted by label, same counts per shard."""
    samples, counts = [], []
    shards = sorted(n for n in os.listdir(src) if n.endswith(".tar"))
    for name in shards:
        with tarfile.open(os.path.join(src, name)) as t:
            members = {}
            for m in t.getmembers():
                key, _, field = m.name.partition(".")
                members.setdefault(key, {})[field] = t.extractfile(m).read()
            counts.append(len(members))
            samples += list(members.items())
    samples.sort(key=lambda kv: int(kv[1]["cls"]))
    os.makedirs(dst)
    it = iter(samples)
    for name, n in zip(shards, counts):
        with tarfile.open(os.path.join(dst, name), "w", format=tarfile.USTAR_FORMAT) as t:
            for _ in range(n):
                key, fields = next(it)
                for field in sorted(fields):
                    info = tarfile.TarInfo(f"{key}.{field}")
                    info.size = len(fields[field])
                    t.addfile(info, __import__("io").BytesIO(fields[field]))
    subprocess.run([tool, "build"] + [os.path.join(dst, n) for n in shards] +
                   ["-o", os.path.join(dst, "manifest.ingot")], check=True, capture_output=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--windows", type=int, nargs="*", default=[1, 2, 4])
    ap.add_argument("--nodes", type=int, nargs="*", default=[2],
                    help="canonical nodes of the dealt orders (window:N,nodes:C)")
    ap.add_argument("--world", type=int, default=4, help="ranks the per-rank figures are for "
                    "(numbered node by node; the training runs on 2 ranks)")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--model", default="mlp")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--shard-size", default="4MiB")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    tool, train = f"{build}/apps/ingot-manifest", f"{build}/apps/ingot-train"
    work = tempfile.mkdtemp(prefix="ingot-order-cost.")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               INGOT_LOG_LEVEL="error")
    rows = []
    try:
        for split in ("train", "test"):
            subprocess.run([tool, "pack", "--fashion-mnist", "-o", f"{work}/{split}", "--split",
                            split, "--shard-size", args.shard_size], check=True,
                           capture_output=True)
        sorted_copy(f"{work}/train", f"{work}/sorted", tool)
        orders = ["full"] + [f"window:{w}" for w in args.windows]
        orders += [f"{kind}:{w},nodes:{c}" for c in args.nodes for kind in ("window", "shards")
                   for w in args.windows]
        launch = ["--oversubscribe", "-np", "2"]
        if "NODES_MPIRUN_ARGS" in os.environ:  # 2 emulated nodes, one rank each
            launch = os.environ["NODES_MPIRUN_ARGS"].split() + ["-np", "2"]
        for data in ("train", "sorted"):
            m = f"{work}/{data}/manifest.ingot"
            cmd = ([f"{build}/tests/order_spread", m, str(args.batch)] + orders +
                   ["--world", str(args.world)])
            spread = [json.loads(x) for x in subprocess.run(
                cmd, check=True, capture_output=True, text=True).stdout.splitlines()]
            for order, sp in zip(orders, spread):
                js = f"{work}/r.json"
                acc = float("nan")
                if not order.startswith("shards:"):  # not a loader order: statistics only
                    subprocess.run(["mpiexec"] + launch + [train, "--model", args.model,
                                    "--epochs", str(args.epochs), "--batch", str(args.batch),
                                    "--train", m, "--test", f"{work}/test/manifest.ingot",
                                    "--json", js], check=True, capture_output=True,
                                   env=dict(env, INGOT_ORDER=order))
                    acc = json.load(open(js))["epochs"][-1]["test_accuracy"]
                rows.append({"dataset": "as packed" if data == "train" else "class-sorted",
                             **sp, "test_accuracy": acc})
                r = rows[-1]
                print(f"{r['dataset']:<13} {r['order']:<17} labels/batch "
                      f"{r['distinct_labels']:5.2f}  top class {r['top_class_share']:.3f}  TV "
                      f"{r['tv_distance']:.3f}  shards/batch {r['shards_per_batch']:5.2f} | per "
                      f"rank: labels {r['rank_distinct_labels']:5.2f} top "
                      f"{r['rank_top_class_share']:.3f} TV {r['rank_tv_distance']:.3f} shards "
                      f"{r['rank_shards']:5.2f} | accuracy {acc:.4f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"# {time.strftime('%Y-%m-%d')}: Fashion-MNIST train split in shards of "
          f"{args.shard_size}, global batch {args.batch}, ingot-train --model {args.model} "
          f"--epochs {args.epochs} on 2 ranks"
          f"{' (2 emulated nodes)' if 'NODES_MPIRUN_ARGS' in os.environ else ''}, seed 1; "
          f"per-rank figures for {args.world} ranks")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
