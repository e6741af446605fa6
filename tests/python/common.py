"""Helpers of the binding's tests (tests/python): the skips, datasets packed with
ingot-manifest, and checks that say what differed. `python common.py require` runs require()
for the shell drivers."""
import os
import subprocess
import sys
import sysconfig

SKIP = 77


def require_torch():
    """Exit 77 (skip) with the reason when this interpreter cannot run the binding's tests: no
    PyTorch, or the module on PYTHONPATH cannot load here (the module is built against the
    stable ABI of 3.11, ingot.abi3.so, which every CPython >= 3.11 loads; an older Python, or a
    version-specific ingot.cpython-3XX-*.so of another Python, cannot). A module this
    interpreter can load that fails to import is a failure, not a skip."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print(f"SKIP: PyTorch is not importable by {sys.executable} ({e}); "
              "Debian: apt-get install python3-torch")
        sys.exit(SKIP)
    dirs = [d for d in os.environ.get("PYTHONPATH", "").split(os.pathsep) if os.path.isdir(d)]
    built = [os.path.join(d, f) for d in dirs for f in sorted(os.listdir(d))
             if f.startswith("ingot.") and f.endswith(".so")]
    if built and not any(loadable(os.path.basename(f)) for f in built):
        print(f"SKIP: the module {built[0]} was built for another Python; {sys.executable} "
              f"({sys.version.split()[0]}) loads ingot.abi3.so from Python >= 3.11 or "
              f"ingot{sysconfig.get_config_var('EXT_SUFFIX')}")
        sys.exit(SKIP)


def loadable(name):
    """Whether this interpreter can import the module file `name`: its own ABI tag, or abi3
    (built for 3.11, so from 3.11 on)."""
    if name == "ingot.abi3.so":
        return sys.version_info >= (3, 11)
    return name == "ingot" + sysconfig.get_config_var("EXT_SUFFIX")


def make_dataset(tool, root, samples, seed=0):
    """Pack `samples` samples (key sNNNN: a .bin of 16 + i % 61 bytes, a .cls label i % 10)."""
    src = os.path.join(root, "src")
    os.makedirs(src, exist_ok=True)
    for i in range(samples):
        with open(os.path.join(src, f"s{i:04d}.bin"), "wb") as f:
            f.write(bytes([(i + seed) % 256]) * (16 + i % 61))
        with open(os.path.join(src, f"s{i:04d}.cls"), "w") as f:
            f.write(str(i % 10))
    out = os.path.join(root, "ds")
    subprocess.run([tool, "pack", src, "-o", out], check=True, stdout=subprocess.DEVNULL)
    return os.path.join(out, "manifest.ingot")


def expect_error(fn, status, *needles):
    """fn() must raise ingot.Error with `status` and every needle in its message."""
    import ingot
    try:
        fn()
    except ingot.Error as e:
        assert e.status == status, f"expected {status}, got {e.status}: {e}"
        assert str(e).startswith(status + ": "), f"str(e) does not begin with the status: {e}"
        for n in needles:
            assert n in e.message, f"{n!r} not in the message {e.message!r}"
        e.__traceback__ = None  # its frames would keep fn (and a batch it names) alive
        return e
    raise AssertionError(f"no ingot.Error ({status}) raised")


if __name__ == "__main__":
    if sys.argv[1:] != ["require"]:
        raise SystemExit("usage: common.py require")
    require_torch()
