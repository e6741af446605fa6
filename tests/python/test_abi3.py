"""One module, another Python (ctest python.binding.abi3): the ingot.abi3.so built here (against
the stable ABI of 3.11) imported by another CPython, which runs a small real epoch: a 1-rank
loader over a packed dataset, the batch count, every sample's first byte and label read through
memoryviews of the batch's memory, the DLPack capsules, and a Python Transform (a call into the
interpreter from a loader worker, its result read through the buffer protocol). Needs nothing
but the standard library there (ctypes for the memory): numpy and PyTorch may be absent.

usage: test_abi3.py OTHER_PYTHON BUILT_FOR INGOT_MANIFEST_TOOL WORKDIR
  OTHER_PYTHON  the interpreter to load the module into (CMake's INGOT_PYTHON_OTHER); skipped
                (77) when it does not exist
  BUILT_FOR     major.minor of the Python the module was built with; an OTHER_PYTHON of the
                same version proves nothing and is skipped
The driver runs under the tests' interpreter, packs the dataset and runs this file again under
OTHER_PYTHON with `child MANIFEST`.
"""
import ctypes
import os
import shutil
import struct
import subprocess
import sys

SKIP = 77
SAMPLES = 96
BATCH = 8


def other_version(python):
    """(major, minor, micro) of `python`, or exit with why it cannot say."""
    out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:3])"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise SystemExit(f"FAIL: INGOT_PYTHON_OTHER={python} does not run: {out.stderr.strip()}")
    return tuple(int(x) for x in out.stdout.split())


def driver(python, built_for, tool, work):
    if not os.path.isfile(python) or not os.access(python, os.X_OK):
        print(f"SKIP: no other CPython >= 3.12 to load the module into (INGOT_PYTHON_OTHER="
              f"{python}); configure with -DINGOT_PYTHON_OTHER=/path/to/python3.12")
        sys.exit(SKIP)
    version = other_version(python)
    if version[:2] == tuple(int(x) for x in built_for.split(".")):
        print(f"SKIP: INGOT_PYTHON_OTHER={python} is {built_for}, the Python the module was "
              "built with: point it at another (3.12, 3.13)")
        sys.exit(SKIP)
    if version[:2] < (3, 11):
        raise SystemExit(f"FAIL: INGOT_PYTHON_OTHER={python} is {'.'.join(map(str, version))}: "
                         "the module (the stable ABI of 3.11) needs Python >= 3.11")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import make_dataset
    shutil.rmtree(work, ignore_errors=True)
    manifest = make_dataset(tool, work, SAMPLES)
    out = subprocess.run([python, os.path.abspath(__file__), "child", manifest], timeout=150)
    sys.exit(out.returncode)


def view(array, fmt):
    """A flat memoryview of a host ingot.Array's items, of struct format `fmt` ("B": uint8, "q":
    int64), through ctypes over its address (no numpy)."""
    n = 1
    for d in array.shape:
        n *= d
    raw = (ctypes.c_uint8 * (n * struct.calcsize(fmt))).from_address(array.ptr)
    return memoryview(raw).cast("B").cast(fmt)


def check_epoch(ingot, manifest):
    """One epoch: SAMPLES // BATCH batches; sample sNNNN's bytes are NNNN % 256 (common.py)."""
    steps, seen = 0, set()
    with ingot.Loader(manifest, BATCH, device="cpu") as l:
        assert l.steps_per_epoch == SAMPLES // BATCH, l.steps_per_epoch
        for b in l:
            data, offs, labels = view(b.data, "B"), view(b.offsets, "q"), view(b.labels, "q")
            for i, key in enumerate(b.keys):
                n = int(key[1:])
                assert data[offs[i]] == n % 256, (key, data[offs[i]])
                assert labels[i] == n % 10, (key, labels[i])
                seen.add(n)
            del data, offs, labels  # views of the slot's memory: gone before its release
            b.release()
            steps += 1
    assert steps == SAMPLES // BATCH, steps
    assert seen == set(range(SAMPLES)), len(seen)


def check_dlpack(ingot, manifest):
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    with ingot.Loader(manifest, BATCH, device="cpu") as l:
        b = next(iter(l))
        assert name(b.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"
        assert name(b.__dlpack__()) == b"dltensor"
        assert b.__dlpack_device__() == (1, 0) and b.exports == 0, b.exports
        b.release()


def check_py_transform(ingot, manifest):
    """fn's bytes (the buffer protocol) become [n, 2] uint8: the first byte and the label."""
    tf = ingot.Transform(lambda s: bytes([s["bin"][0], s["__label__"]]), (2,), "uint8")
    with ingot.Loader(manifest, BATCH, device="cpu", transform=tf) as l:
        for b in l:
            assert b.data.shape == (b.count, 2) and b.data.dtype == "uint8", b.data
            out = view(b.data, "B")
            for i, key in enumerate(b.keys):
                n = int(key[1:])
                assert (out[2 * i], out[2 * i + 1]) == (n % 256, n % 10), (key, out[2 * i])
            del out
            b.release()


def child(manifest):
    import ingot
    assert os.path.basename(ingot.__file__) == "ingot.abi3.so", ingot.__file__
    ingot.init()
    check_epoch(ingot, manifest)
    check_dlpack(ingot, manifest)
    check_py_transform(ingot, manifest)
    ingot.finalize()
    print(f"python.binding.abi3: OK: Python {sys.version.split()[0]} ({sys.executable}) ran an "
          f"epoch of {SAMPLES // BATCH} batches through {ingot.__file__}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(sys.argv[2])
    else:
        driver(*sys.argv[1:5])
