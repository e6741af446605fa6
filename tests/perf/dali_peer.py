#!/usr/bin/python3
"""DALI peer for the loader benchmark: DALI's CPU webdataset reader over the same tar shards
ingot reads (run with the Python of a venv that has PyPI's nvidia-dali-cuda120; no GPU needed).

fn.readers.webdataset over every shard, the "bin" member of each sample as a uint8 tensor,
shuffled (random_shuffle with a buffer of initial_fill samples, as DALI shuffles), num_threads =
cores, batch BATCH, on the CPU (device_id=None). DALI checks nothing against a manifest: ingot
with verify on does more work per sample. The shards' index files (DALI's wds2idx format, made
here once beside the shards in DIR/dali-index/) are built before timing. Prints samples/s over
EPOCHS epochs, the first batch excluded, as JSON (the torch_peer.py fields).
usage: dali_peer.py SHARD... --batch BATCH [--epochs N] [--threads T]
"""
import json, os, sys, tarfile, time


def index_of(shard, root):
    """DALI's index of a tar shard (v1.2: a line per sample, its member's type, offset, size,
    name), written once under ROOT."""
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, os.path.basename(shard) + ".idx")
    if os.path.exists(path):
        return path
    lines = []
    with tarfile.open(shard, "r|") as tar:
        for m in tar:
            if m.isfile():
                key, ext = m.name.rsplit(".", 1)
                lines.append("%s %d %d %s" % (ext, m.offset_data, m.size, m.name))
    with open(path + ".tmp", "w") as f:
        f.write("v1.2 %d\n" % len(lines))
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)
    return path


def main():
    args = sys.argv[1:]
    opt = lambda name, dflt: int(args[args.index(name) + 1]) if name in args else dflt
    batch, epochs, threads = opt("--batch", 256), opt("--epochs", 1), opt("--threads", os.cpu_count())
    shards = sorted(a for a in args if a.endswith(".tar"))
    root = os.path.join(os.path.dirname(shards[0]), "dali-index")
    index = [index_of(s, root) for s in shards]
    import nvidia.dali as dl
    import nvidia.dali.fn as fn

    @dl.pipeline_def(batch_size=batch, num_threads=threads, device_id=None, prefetch_queue_depth=2)
    def pipe():
        return fn.readers.webdataset(paths=shards, index_paths=index, ext=["bin"], name="r",
                                     random_shuffle=True, initial_fill=4 * batch,
                                     pad_last_batch=False)

    p = pipe()
    p.build()
    size = p.epoch_size("r")
    steps = size // batch
    n, t0 = 0, None
    for _ in range(epochs):
        for _ in range(steps):
            out = p.run()
            if t0 is None:
                t0 = time.perf_counter()  # the first batch (the pipeline's fill) is excluded
                continue
            n += len(out[0])
    dt = time.perf_counter() - t0
    print(json.dumps({"mode": "dali-webdataset", "samples": n, "seconds": dt,
                      "samples_per_s": n / dt, "threads": threads, "dali": dl.__version__}))


if __name__ == "__main__":
    main()
