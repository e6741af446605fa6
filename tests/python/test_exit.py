"""Scripts that end holding batches (ctest python.binding.exit), each a fresh interpreter whose
stderr must carry no ingot line at all (INGOT_LOG_LEVEL=warn, as under ctest):
  - `for batch in loader:` to the end of the epoch, then exit: `batch` is still bound;
  - the same keeping a tensor made from the last batch (torch.from_dlpack) alive, with a second
    epoch being prefetched;
  - Ctrl-C while next() waits: the interrupted call delivers its batch after the interruption,
    nobody takes it, and the script ends with KeyboardInterrupt (killed by SIGINT);
  - `with Loader(...) as l: for batch in l:`: the explicit close gives the held batch back,
    and that batch then raises "its loader was closed" when used;
  - close() while a tensor from a batch is alive: refused with INGOT_ERR_BUSY naming it, then,
    once the tensor is gone, closed.

usage: test_exit.py INGOT_MANIFEST_TOOL WORKDIR
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import make_dataset, require_torch  # noqa: E402

SAMPLES = 64
BATCH = 8

HEAD = "import ingot, os, signal, sys, threading, torch\ningot.init()\nm = sys.argv[1]\n"

SCRIPTS = {
    "loop": ("loader = ingot.Loader(m, 8, device='cpu')\n"
             "for batch in loader:\n    pass\n"
             "print('last step', batch.step, 'held', loader.held)\n"),
    "tensor": ("loader = ingot.Loader(m, 8, device='cpu', epochs=2)\n"
               "for batch in loader:\n    x = torch.from_dlpack(batch)\n"
               "print('last step', batch.step, 'held', loader.held, 'exports', batch.exports)\n"),
    "interrupt": ("loader = ingot.Loader(m, 8, device='cpu')\n"
                  "threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
                  "print('waiting', flush=True)\n"
                  "for batch in loader:\n    pass\n"),
    "with": ("with ingot.Loader(m, 8, device='cpu') as loader:\n"
             "    for batch in loader:\n        pass\n"
             "    assert loader.held == 1, loader.held\n"
             "try:\n    batch.data\n    raise AssertionError('a closed loader batch was usable')\n"
             "except ingot.Error as e:\n"
             "    assert e.status == 'INGOT_ERR_INVALID_PARAM', e\n"
             "    assert 'its loader was closed' in e.message, e.message\n"
             "print('last step', batch.step, 'closed')\n"),
    "busy": ("loader = ingot.Loader(m, 8, device='cpu')\n"
             "batch = next(iter(loader))\nt = torch.from_dlpack(batch)\n"
             "try:\n    loader.close()\n    raise AssertionError('closed under a live tensor')\n"
             "except ingot.Error as e:\n"
             "    assert e.status == 'INGOT_ERR_BUSY', e\n"
             "    assert '1 tensor(s) exported from its batches are alive' in e.message, e.message\n"
             "assert int(t[0]) == int(t[0])  # still readable: nothing was freed\n"
             "del t\nloader.close()\n"
             "print('closed after the tensor went')\n"),
}

EXPECT = {  # script -> (exit status, a line its stdout must hold)
    "loop": (0, f"last step {SAMPLES // BATCH - 1} held 1"),
    "tensor": (0, f"last step {SAMPLES // BATCH - 1} held 1 exports 1"),
    "interrupt": (-2, "waiting"),  # Python ends by SIGINT after a KeyboardInterrupt
    "with": (0, f"last step {SAMPLES // BATCH - 1} closed"),
    "busy": (0, "closed after the tensor went"),
}


def run(name, manifest):
    env = dict(os.environ, INGOT_LOG_LEVEL="warn")
    if name == "interrupt":  # the first step takes 1.5 s: Ctrl-C comes while next() waits
        env["INGOT_STORAGE_EMULATE"] = "lat=1500ms"
    out = subprocess.run([sys.executable, "-c", HEAD + SCRIPTS[name], manifest], env=env,
                         capture_output=True, text=True, timeout=120)
    status, line = EXPECT[name]
    assert out.returncode == status, f"{name}: exit {out.returncode}\n{out.stdout}{out.stderr}"
    assert line in out.stdout.splitlines(), f"{name}: no line {line!r}\n{out.stdout}{out.stderr}"
    ingot_lines = [s for s in out.stderr.splitlines() if "INGOT" in s or "still held" in s]
    assert not ingot_lines, f"{name}: stderr holds ingot's lines:\n" + "\n".join(ingot_lines)
    if name == "interrupt":
        assert out.stderr.rstrip().endswith("KeyboardInterrupt"), out.stderr


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    require_torch()
    tool, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    manifest = make_dataset(tool, work, SAMPLES)
    for name in SCRIPTS:
        run(name, manifest)
        print(f"{name}: ok")
    shutil.rmtree(work, ignore_errors=True)
    print("exit checks passed")


if __name__ == "__main__":
    main()
