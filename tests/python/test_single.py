"""The binding on one process (ctest python.binding.single): import without MPI, init as a singleton,
zero-copy DLPack exports (legacy and versioned capsules), the slot life cycle (exports pin a
batch, out-of-order drops, release() refused while exports live, the depth error), errors
(bad manifest path, bad arguments, a cursor of another manifest, a bad INGOT_* value), the
fork guard, stats(), exactly-once over two epochs, the disk tier's counters in stats(), the
transforms (ImageTransform's values and an image of the wrong size named; a Python Transform's
outputs, one that raises (its exception, noted with the sample key), one of the wrong size, bad
arguments) and the device argument.

usage: test_single.py INGOT_MANIFEST_TOOL WORKDIR
"""
import ctypes
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import expect_error, make_dataset, require_torch  # noqa: E402

SAMPLES = 96
BATCH = 8


def check_import_without_mpi():
    # A fresh interpreter: importing starts nothing; calls before init() say so.
    code = ("import ingot\n"
            "try:\n    ingot.placement()\nexcept ingot.Error as e:\n"
            "    print(e.status, e.message)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "INGOT_ERR_INVALID_PARAM ingot.init() has not been called", \
        out.stdout


def check_bad_config():
    code = ("import ingot\n"
            "try:\n    ingot.init()\nexcept ingot.Error as e:\n"
            "    print(e.status); print(e.message)\n")
    env = dict(os.environ, INGOT_TIMEOUT="abc")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines and lines[0] == "INGOT_ERR_CONFIG", out.stdout + out.stderr
    assert "INGOT_TIMEOUT" in lines[1] and "abc" in lines[1], lines


def check_zero_copy(ingot, torch, manifest):
    with ingot.Loader(manifest, BATCH, device="cpu") as l:
        b = next(iter(l))
        t = torch.from_dlpack(b)  # legacy capsule: PyTorch 1.13 passes no max_version
        assert t.data_ptr() == b.data.ptr, (t.data_ptr(), b.data.ptr)
        assert t.dtype == torch.uint8 and t.shape == (b.data.shape[0],)
        offs = torch.from_dlpack(b.offsets)
        lens = torch.from_dlpack(b.lengths)
        assert offs.data_ptr() == b.offsets.ptr and offs.dtype == torch.int64
        labels = torch.from_dlpack(b.labels)
        assert labels.dtype == torch.int64 and labels.shape == (b.count,)
        for i, key in enumerate(b.keys):  # the sample's fields, .bin then .cls, back to back
            n, o = int(key[1:]), int(offs[i])
            nbin, cls = 16 + n % 61, str(n % 10).encode()
            assert int(lens[i]) == nbin + len(cls), (key, int(lens[i]))
            assert bool((t[o:o + nbin] == n % 256).all()), key
            assert bytes(t[o + nbin:o + nbin + len(cls)].tolist()) == cls, key
            assert int(labels[i]) == n % 10, (key, int(labels[i]))
        # Versioned capsule when the consumer asks for DLPack 1.x.
        name = ctypes.pythonapi.PyCapsule_GetName
        name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        assert name(b.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"
        assert name(b.__dlpack__()) == b"dltensor"
        assert b.__dlpack_device__() == (1, 0)
        del t, offs, lens, labels
        assert b.exports == 0, b.exports  # unconsumed capsules freed their exports too
        b.release()


def check_slots(ingot, torch, manifest):
    with ingot.Loader(manifest, BATCH, device="cpu", depth=2) as l:
        it = iter(l)
        b1 = next(it)
        t1 = torch.from_dlpack(b1)
        expect_error(b1.release, "INGOT_ERR_BUSY", "export")
        assert b1.exports == 1, b1.exports
        del b1  # the tensor pins the batch: the slot stays held
        assert l.held == 1, l.held
        b2 = next(it)
        assert l.held == 2
        expect_error(lambda: next(it), "INGOT_ERR_NO_RESOURCE", "depth=2")
        del b2  # dropped out of order: held until the first is given back
        assert l.held == 2, l.held
        del t1
        assert l.held == 0, l.held
        b3 = next(it)
        assert b3.step == 2, b3.step
        b3.release()
        assert b3.released
        expect_error(lambda: b3.data, "INGOT_ERR_INVALID_PARAM", "released")


def check_errors(ingot, manifest, other):
    missing = os.path.join(os.path.dirname(manifest), "nope", "manifest.ingot")
    expect_error(lambda: ingot.Loader(missing, BATCH, device="cpu"), "INGOT_ERR_NOT_FOUND",
                 missing)
    expect_error(lambda: ingot.Loader(manifest, 0, device="cpu"), "INGOT_ERR_INVALID_PARAM",
                 "global_batch_size=0")
    expect_error(lambda: ingot.Loader(manifest, BATCH, device="tpu"), "INGOT_ERR_INVALID_PARAM",
                 "'tpu'")
    expect_error(lambda: ingot.Loader(manifest, BATCH, verify="maybe"),
                 "INGOT_ERR_INVALID_PARAM", "maybe")
    with ingot.Loader(other, BATCH, device="cpu") as lo:
        sd_other = lo.state_dict()
    with ingot.Loader(manifest, BATCH, device="cpu") as l:
        sd = l.state_dict()
        e = expect_error(lambda: l.load_state_dict(sd_other), "INGOT_ERR_MISMATCH",
                         "manifest digest")
        for d in (sd_other["manifest_digest"], sd["manifest_digest"]):
            assert f"{d:016x}" in e.message, (f"{d:016x}", e.message)
        expect_error(lambda: l.load_state_dict({"seed": 0}), "INGOT_ERR_FORMAT", "version")
        assert next(iter(l)).step == 0  # the loader is unchanged by the refusals


def check_fork(ingot):
    pid = os.fork()
    if pid == 0:
        try:
            ingot.placement()
            os._exit(2)
        except ingot.Error as e:
            os._exit(0 if (str(os.getppid()) in e.message and "fork" in e.message) else 3)
        except BaseException:
            os._exit(4)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"child: {status}"


def check_interrupt(ingot, manifest, work):
    """Ctrl-C during a wait: the shard is a FIFO nobody writes, so the reader blocks in open()
    and next() waits; SIGINT must interrupt it at once, and the call left in flight is handed
    over by the next next() (here its error, once a writer opens and closes the FIFO)."""
    import signal
    import threading
    import time
    d = os.path.join(work, "fifo")
    shutil.copytree(os.path.dirname(manifest), d)
    shard = os.path.join(d, "shard-000000.tar")
    os.remove(shard)
    os.mkfifo(shard)
    stop = threading.Event()

    def unblock_readers():  # each of the loader's readers opens the FIFO: let each open return
        while not stop.is_set():
            try:
                os.close(os.open(shard, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # ENXIO: no reader waiting right now
                time.sleep(0.01)

    l = ingot.Loader(os.path.join(d, "manifest.ingot"), BATCH, device="cpu")
    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    t0 = time.monotonic()
    try:
        next(iter(l))
        raise AssertionError("next() returned a batch from a FIFO nobody writes")
    except KeyboardInterrupt:
        waited = time.monotonic() - t0
    assert waited < 5, f"Ctrl-C took {waited:.1f} s to interrupt the wait"
    feeder = threading.Thread(target=unblock_readers)
    feeder.start()
    try:  # the empty shard fails the step that was in flight; this call hands it over
        expect_error(lambda: next(iter(l)), "INGOT_ERR_MISMATCH", "shard-000000.tar",
                     "has 0 bytes")  # the reader's message, handed over with the step's error
        l.close()
    finally:
        stop.set()
        feeder.join()


def check_epochs(ingot, torch, manifest):
    with ingot.Loader(manifest, BATCH, device="cpu", epochs=2, seed=7) as l:
        assert l.steps_per_epoch == SAMPLES // BATCH
        orders = []
        for epoch in range(2):
            seen = []
            for b in l:
                assert b.epoch == epoch
                seen += torch.from_dlpack(b.indices).tolist()
            assert sorted(seen) == list(range(SAMPLES)), f"epoch {epoch}: {sorted(seen)}"
            orders.append(seen)
        assert orders[0] != orders[1], "the two epochs have the same order"
        assert list(l) == []  # the run is over
        s = l.stats()
        assert s["steps"] == 2 * SAMPLES // BATCH and s["samples"] == 2 * SAMPLES, s
        assert s["depth"] == 4
        # Bytes by source: no peer cache on one rank, so every record byte came from storage,
        # each sample's fields (the .bin and its one-digit .cls) once per epoch.
        record = sum(16 + i % 61 + 1 for i in range(SAMPLES))
        assert [e["epoch"] for e in s["epochs"]] == [0, 1], s["epochs"]
        for e in s["epochs"]:
            assert e["bytes_peer"] == 0 and e["bytes_local"] == 0 and e["bytes_disk"] == 0, e
            assert e["bytes_storage"] >= record, (e, record)  # tar headers between fields too
        assert s["bytes_by_source"]["storage"] == sum(e["bytes_storage"] for e in s["epochs"])
        assert s["bytes_by_source"]["disk"] == 0 and s["disk_hits"] == 0, s  # no disk tier
        assert s["wall_ns"] > 0 and s["stall_ns"] <= s["wall_ns"], s  # the AU inputs


def check_disk_tier(manifest, work):
    """stats() with the node's disk tier (a fresh interpreter: the tier's INGOT_* are read at
    init): job 1 fills the folder, its reads below the tier in disk_bytes_below; job 2 (the same
    folder, after job 1 has ended) reads every record byte from the disk and nothing below."""
    code = ("import ingot, json\n"
            "ingot.init()\n"
            "out = []\n"
            "for job in range(2):\n"
            "    with ingot.Loader(%r, %d, device='cpu', epochs=1, seed=3) as l:\n"
            "        n = sum(b.count for b in l)\n"
            "        s = l.stats()\n"
            "    out.append({'n': n, 'below': s['disk_bytes_below'], 'epochs': s['epochs'],\n"
            "                'hits': s['disk_hits'], 'misses': s['disk_misses']})\n"
            "ingot.finalize()\n"
            "print(json.dumps(out))\n") % (manifest, BATCH)
    folder = os.path.join(work, "disk")
    env = dict(os.environ, INGOT_DISK_CACHE_DIR=folder, INGOT_DISK_CACHE_BYTES="64MiB",
               INGOT_DISK_PREFETCH="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    import json
    job1, job2 = json.loads(out.stdout.strip().splitlines()[-1])
    record = sum(16 + i % 61 + 1 for i in range(SAMPLES))
    assert job1["n"] == SAMPLES and job2["n"] == SAMPLES, (job1, job2)
    e1, e2 = job1["epochs"][0], job2["epochs"][0]
    # job 1: a cold folder; every miss read below the tier (whole pieces, headers and all)
    assert job1["misses"] > 0 and job1["below"] >= record, (job1, record)
    assert e1["bytes_storage"] + e1["bytes_disk"] >= record, e1
    # job 2: every record byte from the disk, nothing read below
    assert job2["below"] == 0 and job2["misses"] == 0 and job2["hits"] > 0, job2
    assert e2["bytes_storage"] == 0 and e2["bytes_disk"] >= record, e2
    assert os.path.isdir(folder), folder


def make_images(tool, root, n, h, w, bad=None):
    """n samples: a P5 w x h image whose pixel k is (i * 7 + k) % 256, and a label; sample `bad`
    gets an image one row short."""
    src = os.path.join(root, "src")
    os.makedirs(src, exist_ok=True)
    for i in range(n):
        rows = h - 1 if i == bad else h
        with open(os.path.join(src, f"im{i:03d}.pgm"), "wb") as f:
            f.write(f"P5 {w} {rows} 255\n".encode())
            f.write(bytes((i * 7 + k) % 256 for k in range(rows * w)))
        with open(os.path.join(src, f"im{i:03d}.cls"), "w") as f:
            f.write(str(i % 10))
    out = os.path.join(root, "ds")
    subprocess.run([tool, "pack", src, "-o", out], check=True, stdout=subprocess.DEVNULL)
    return os.path.join(out, "manifest.ingot")


def check_image_transform(ingot, torch, tool, work):
    h, w, n = 6, 8, 32
    m = make_images(tool, os.path.join(work, "img"), n, h, w)
    tf = ingot.ImageTransform((1, h, w), mean=0.5, std=0.25, field="pgm")
    assert tf.shape == (1, h, w) and tf.dtype == "float32", (tf.shape, tf.dtype)
    seen = 0
    with ingot.Loader(m, BATCH, device="cpu", transform=tf) as l:
        for b in l:
            x = torch.from_dlpack(b)
            assert x.data_ptr() == b.data.ptr and b.data.shape == (b.count, 1, h, w)
            assert x.dtype == torch.float32 and x.shape == (b.count, 1, h, w), x.shape
            for j, key in enumerate(b.keys):
                i = int(key[2:])
                px = torch.tensor([(i * 7 + k) % 256 for k in range(h * w)], dtype=torch.float32)
                want = ((px / 255 - 0.5) / 0.25).reshape(1, h, w)
                assert torch.allclose(x[j], want, atol=1e-5), key
                seen += 1
            del x
        assert l.stats()["transform_p50_ns"] > 0
    assert seen == n, seen
    # An image of another size: the step fails with the library's message naming the sample.
    bad = make_images(tool, os.path.join(work, "img-bad"), n, h, w, bad=13)
    with ingot.Loader(bad, n, device="cpu", transform=tf) as l:
        expect_error(lambda: next(iter(l)), "INGOT_ERR_FORMAT", "sample 'im013'",
                     "a 8x5 P5 image")
    # Bad parameters, each named.
    expect_error(lambda: ingot.ImageTransform((1, h, w), std=0.0), "INGOT_ERR_INVALID_PARAM",
                 "std 0")
    expect_error(lambda: ingot.ImageTransform((3, h, w), mean=(0.1, 0.2)),
                 "INGOT_ERR_INVALID_PARAM", "mean=(0.1, 0.2)", "3 numbers")
    expect_error(lambda: ingot.ImageTransform((1, 2, h, w)), "INGOT_ERR_INVALID_PARAM",
                 "4 dimensions")
    expect_error(lambda: ingot.ImageTransform((5, h, w)), "INGOT_ERR_INVALID_PARAM",
                 "5 channels")
    expect_error(lambda: ingot.ImageTransform((0, w)), "INGOT_ERR_INVALID_PARAM", "shape=(0, 8)")


def check_py_transform(ingot, torch, manifest):
    import numpy as np

    def describe(s):  # a sample's identity and fields as 4 int64
        return np.array([s["__index__"], s["__label__"], len(s["bin"]), s["bin"][0]], np.int64)

    seen = set()
    tf = ingot.Transform(describe, (4,), "int64")
    assert tf.shape == (4,) and tf.dtype == "int64"
    with ingot.Loader(manifest, BATCH, device="cpu", transform=tf) as l:
        for b in l:
            x = torch.from_dlpack(b)
            assert x.shape == (b.count, 4) and x.dtype == torch.int64
            for j, i in enumerate(torch.from_dlpack(b.indices).tolist()):
                assert x[j].tolist() == [i, i % 10, 16 + i % 61, i % 256], (i, x[j])
                seen.add(i)
            del x
    assert seen == set(range(SAMPLES)), len(seen)
    # A CPU torch tensor as the result (through .numpy()), dtype given as torch's.
    t = ingot.Transform(lambda s: torch.full((2,), float(s["__index__"])), (2,), torch.float32)
    with ingot.Loader(manifest, BATCH, device="cpu", transform=t) as l:
        b = next(iter(l))
        x = torch.from_dlpack(b)
        assert x[:, 0].tolist() == [float(i) for i in torch.from_dlpack(b.indices).tolist()]
        del x, b

    def raises(s):
        if s["__index__"] == 37:
            raise KeyError("no label for " + s["__key__"])
        return describe(s)

    with ingot.Loader(manifest, SAMPLES, device="cpu",
                      transform=ingot.Transform(raises, (4,), "int64")) as l:
        try:
            next(iter(l))
            raise AssertionError("a transform that raises gave a batch")
        except KeyError as e:  # the transform's own exception, noted with the sample
            assert "s0037" in str(e), e
            assert any("sample 's0037' (index 37)" in n for n in e.__notes__), e.__notes__
        # The step failed: the loader says so on every later call, naming the sample again.
        expect_error(lambda: next(iter(l)), "INGOT_ERR_FORMAT", "sample 's0037'")
    short = ingot.Transform(lambda s: np.zeros(3, np.int64), (4,), "int64")
    with ingot.Loader(manifest, BATCH, device="cpu", transform=short) as l:
        try:
            next(iter(l))
            raise AssertionError("a transform of the wrong size gave a batch")
        except ValueError as e:
            assert "returned 24 bytes" in str(e) and "expected shape (4,) of int64" in str(e), e
    try:
        ingot.Loader(manifest, BATCH, device="cpu", transform=describe)
        raise AssertionError("a bare callable was taken as a transform")
    except TypeError as e:
        assert "ingot.Transform(fn, shape, dtype)" in str(e), e
    expect_error(lambda: ingot.Transform(describe, (4,), "complex64"), "INGOT_ERR_INVALID_PARAM",
                 "complex64")
    expect_error(lambda: ingot.Transform(describe, (4, -1)), "INGOT_ERR_INVALID_PARAM",
                 "shape=(4, -1)")


def check_deferred_release(ingot, torch, manifest):
    """A batch dropped by another thread while next() waits on the wait thread (inside
    ingot_loader_next, where the C loader must not be called) is marked done, not released; the
    next drain (a later drop or next()) gives it back. Step 2's samples block in the transform until the drop is seen."""
    import threading
    import time
    import numpy as np
    with ingot.Loader(manifest, BATCH, device="cpu", seed=3) as probe:
        it = iter(probe)
        step2 = [torch.from_dlpack(next(it).indices).tolist() for _ in range(3)][2]
    gate, entered = threading.Event(), threading.Event()

    def fn(s):
        if s["__index__"] in step2:
            entered.set()
            gate.wait(30)  # releases the GIL
        return np.zeros(1, np.int64)

    with ingot.Loader(manifest, BATCH, device="cpu", seed=3, depth=3,
                      transform=ingot.Transform(fn, (1,), "int64")) as l:
        it = iter(l)
        holder = [next(it)]
        b1 = next(it)
        seen = {}

        def drop_while_waiting():
            entered.wait(30)
            time.sleep(0.5)  # main is in next(), its call waiting for step 2 on the wait thread
            holder.clear()   # step 0's batch: its last reference
            seen["held"] = l.held
            gate.set()

        t = threading.Thread(target=drop_while_waiting)
        t.start()
        b2 = next(it)  # returns once the gate opens
        t.join()
        assert seen["held"] == 2, f"step 0 was given back during the call: held {seen['held']}"
        assert b2.step == 2 and l.held == 3, (b2.step, l.held)  # step 0: done, not yet given back
        del b1, b2
        assert l.held == 0, l.held  # nothing in flight now: every done batch given back
        assert next(it).step == 3


def check_device(ingot, torch, manifest):
    """device='placement' follows the plan (host batches where it has no GPU); a CUDA index
    this process cannot use is refused by the library, naming it."""
    with ingot.Loader(manifest, BATCH) as l:
        b = next(iter(l))
        planned = ingot.placement()["device"]  # host batches also where CUDA is not usable
        assert b.device == planned or (planned != "cpu" and b.device == "cpu"), b.device
        want = (1, 0) if b.device == "cpu" else (2, int(b.device.split(":")[1]))
        assert b.__dlpack_device__() == want and b.data.device == b.device, b.__dlpack_device__()
        del b
    expect_error(lambda: ingot.Loader(manifest, BATCH, device=-1), "INGOT_ERR_INVALID_PARAM",
                 "device=-1")
    if not torch.cuda.is_available():
        expect_error(lambda: ingot.Loader(manifest, BATCH, device=0), "INGOT_ERR_NO_DEVICE",
                     "loader device 0")


def main():
    require_torch()
    import torch
    tool, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)  # a fresh work folder per run
    manifest = make_dataset(tool, os.path.join(work, "a"), SAMPLES)
    other = make_dataset(tool, os.path.join(work, "b"), SAMPLES, seed=1)
    check_import_without_mpi()
    check_bad_config()
    import ingot
    ingot.init()
    assert ingot.rank() == 0 and ingot.world_size() == 1
    p = ingot.placement()
    assert p["device"].startswith(("cpu", "cuda:")) and p["local_size"] == 1, p
    expect_error(ingot.init, "INGOT_ERR_EXISTS", "already")
    check_zero_copy(ingot, torch, manifest)
    check_slots(ingot, torch, manifest)
    check_errors(ingot, manifest, other)
    check_fork(ingot)
    check_interrupt(ingot, manifest, work)
    check_epochs(ingot, torch, manifest)
    check_disk_tier(manifest, work)
    check_image_transform(ingot, torch, tool, work)
    check_py_transform(ingot, torch, manifest)
    check_deferred_release(ingot, torch, manifest)
    check_device(ingot, torch, manifest)
    ingot.finalize()
    print("python.binding.single: OK")


if __name__ == "__main__":
    main()
