"""The binding on several ranks (ctest python.binding.mpi, driven by run_mpi.sh). Modes:

  make TOOL DIR          pack the dataset (one process)
  epochs DIR             every rank: 2 epochs; writes the indices it got; a global batch that
                         the world size does not divide is refused
  save DIR STEPS         every rank: STEPS steps of epoch 0, then state_dict() (rank 0 writes it)
  resume DIR             every rank: load_state_dict() of that file, then the rest of epoch 0
  check DIR WORLD1 WORLD2  one process: exactly once per epoch, and over save + resume
  mpi4py DIR             every rank: ingot on an mpi4py sub-communicator (ranks split by
                         parity): 2 epochs exactly once within each half, gathered through
                         mpi4py; a comm that is not a communicator is refused
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import expect_error, make_dataset, require_torch  # noqa: E402

SAMPLES = 256
BATCH = 16
SEED = 5


def manifest(d):
    return os.path.join(d, "data", "ds", "manifest.ingot")


def write(d, name, obj):
    with open(os.path.join(d, name), "w") as f:
        json.dump(obj, f)


def read(d, name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def take(loader, torch, steps=None):
    got = []
    for n, b in enumerate(loader):
        got += torch.from_dlpack(b.indices).tolist()
        if steps is not None and n + 1 == steps:
            break
    return got


def run_epochs(ingot, torch, d):
    world = ingot.world_size()
    bad = BATCH + world // 2  # not a multiple of the world size (4 ranks: 18)
    expect_error(lambda: ingot.Loader(manifest(d), bad, device="cpu"), "INGOT_ERR_INVALID_PARAM",
                 str(bad))
    with ingot.Loader(manifest(d), BATCH, device="cpu", epochs=2, seed=SEED) as l:
        epochs = [take(l, torch), take(l, torch)]
    write(d, f"epochs-{ingot.rank()}.json", {"world": world, "epochs": epochs})


def run_save(ingot, torch, d, steps):
    with ingot.Loader(manifest(d), BATCH, device="cpu", seed=SEED) as l:
        got = take(l, torch, steps)
        sd = l.state_dict()
    assert sd["consumed"] == steps * BATCH and sd["epoch"] == 0, sd
    if ingot.rank() == 0:
        write(d, "state.json", sd)
    write(d, f"save-{ingot.rank()}.json", got)


def run_resume(ingot, torch, d):
    with ingot.Loader(manifest(d), BATCH, device="cpu", seed=SEED) as l:
        l.load_state_dict(read(d, "state.json"))
        got = take(l, torch)
    write(d, f"resume-{ingot.rank()}.json", got)


def exactly_once(ids, what):
    missing = sorted(set(range(SAMPLES)) - set(ids))
    dup = sorted({i for i in ids if ids.count(i) > 1})
    assert not missing and not dup and len(ids) == SAMPLES, \
        f"{what}: {len(ids)} ids, missing {missing[:10]}, duplicated {dup[:10]}"


def check(d, world1, world2):
    for epoch in range(2):
        ids = []
        for r in range(world1):
            rec = read(d, f"epochs-{r}.json")
            assert rec["world"] == world1
            ids += rec["epochs"][epoch]
        exactly_once(ids, f"epoch {epoch} at {world1} ranks")
    saved = sum((read(d, f"save-{r}.json") for r in range(world1)), [])
    resumed = sum((read(d, f"resume-{r}.json") for r in range(world2)), [])
    assert saved and resumed, (len(saved), len(resumed))
    exactly_once(saved + resumed, f"save at {world1} ranks + resume at {world2}")
    print(f"python.binding.mpi: OK ({world1} ranks: 2 epochs exactly once; {len(saved)} samples, "
          f"state_dict, {len(resumed)} more at {world2} ranks: exactly once)")


def run_mpi4py(d):
    """ingot.init(comm=...) on half of the ranks each: ingot's world is the sub-communicator,
    and each half reads the whole dataset exactly once per epoch. mpi4py initialised MPI and
    finalises it at exit, after ingot.finalize() (which the binding runs at exit first)."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        print(f"SKIP: mpi4py is not importable ({e}); Debian: apt-get install python3-mpi4py")
        sys.exit(77)
    require_torch()
    import torch
    import ingot
    world = MPI.COMM_WORLD
    expect_error(lambda: ingot.init(comm=42), "INGOT_ERR_INVALID_PARAM",
                 "expected an mpi4py communicator")
    half = world.Split(color=world.rank % 2, key=world.rank)
    ingot.init(comm=half)
    assert ingot.world_size() == half.size == world.size // 2, (ingot.world_size(), half.size)
    assert ingot.rank() == half.rank, (ingot.rank(), half.rank)
    with ingot.Loader(manifest(d), BATCH, device="cpu", epochs=2, seed=SEED) as l:
        for epoch in range(2):
            ids = sum(half.allgather(take(l, torch)), [])
            exactly_once(ids, f"epoch {epoch} on half {world.rank % 2} ({half.size} ranks)")
    world.Barrier()
    if world.rank == 0:
        print(f"python.binding.mpi4py: OK ({world.size} ranks in two halves of {half.size}: 2 epochs "
              "exactly once in each)")


def main():
    mode, d = sys.argv[1], sys.argv[2]
    if mode == "mpi4py":
        run_mpi4py(d)
        return
    if mode == "make":
        make_dataset(sys.argv[3], os.path.join(d, "data"), SAMPLES)
        return
    if mode == "check":
        check(d, int(sys.argv[3]), int(sys.argv[4]))
        return
    require_torch()
    import torch
    import ingot
    ingot.init()
    if mode == "epochs":
        run_epochs(ingot, torch, d)
    elif mode == "save":
        run_save(ingot, torch, d, int(sys.argv[3]))
    elif mode == "resume":
        run_resume(ingot, torch, d)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
