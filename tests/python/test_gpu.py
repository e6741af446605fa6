"""GPU batches through the binding (ctest python.binding.gpu): a loader on CUDA device 0 against a host
loader over the same manifest and seed, both iterated in step. Each GPU batch is imported with
torch.from_dlpack on a side stream of the test's (so the export must make that stream wait on
the batch's ready event), copied on that stream, and dropped at once, before the copy is done
(so the slot must not be refilled until the stream's work is); after the run every copy must be
byte-identical to the host batch. The same with ImageTransform (float32 batches on the GPU).
Skips (77) without PyTorch, without a CUDA device or when the module was built without CUDA.

usage: test_gpu.py INGOT_MANIFEST_TOOL WORKDIR
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import SKIP, make_dataset, require_torch  # noqa: E402
from test_single import make_images  # noqa: E402

SAMPLES = 256
BATCH = 16


def run_pair(ingot, torch, manifest, transform=None):
    kw = dict(seed=3, epochs=2, depth=3)
    if transform is not None:
        kw["transform"] = transform
    host = ingot.Loader(manifest, BATCH, device="cpu", **kw)
    gpu = ingot.Loader(manifest, BATCH, device=0, **kw)
    side = torch.cuda.Stream(device=0)
    copies, want = [], []
    for epoch in range(2):
        for hb in host:
            gb = next(gpu)
            assert gb.device == "cuda:0" and gb.__dlpack_device__() == (2, 0), gb.device
            assert hb.step == gb.step and hb.count == gb.count
            with torch.cuda.stream(side):
                t = torch.from_dlpack(gb)  # the side stream waits on the batch's ready event
                assert t.device.type == "cuda" and t.data_ptr() == gb.data.ptr
                copies.append(t.clone())  # enqueued on the side stream
            want.append(torch.from_dlpack(hb).clone())
            # Every tensor of the batch is dropped now; the copy may still be queued.
            del t, gb, hb
        assert next(gpu, None) is None  # its epoch ends with the host's
    side.synchronize()
    assert len(copies) == 2 * SAMPLES // BATCH, len(copies)
    for i, (c, w) in enumerate(zip(copies, want)):
        if not torch.equal(c.cpu(), w):
            raise AssertionError(f"step {i}: the GPU batch differs from the host batch")
    gpu.close()
    host.close()
    return len(copies)


def main():
    require_torch()
    import torch
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        sys.exit(SKIP)
    import ingot
    ingot.init()
    tool, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    try:
        probe = ingot.Loader(make_dataset(tool, os.path.join(work, "a"), SAMPLES), BATCH,
                             device=0)
        probe.close()
    except ingot.Error as e:
        # only "no usable CUDA device" (no driver, no device, or a build without CUDA) is a
        # skip; any other failure to make a GPU loader is a failure
        if e.status != "INGOT_ERR_NO_DEVICE" or "sees 0 usable CUDA device(s)" not in e.message:
            raise
        print(f"SKIP: no GPU loader here: {e}")
        sys.exit(SKIP)
    m = os.path.join(work, "a", "ds", "manifest.ingot")
    with ingot.Loader(m, BATCH, device=0) as l:  # DLPack's stream rules for CUDA
        b = next(iter(l))
        try:
            b.__dlpack__(stream=0)
            raise AssertionError("stream=0 (ambiguous for CUDA) was accepted")
        except ValueError as e:
            assert "ambiguous" in str(e), e
        del b
    steps = run_pair(ingot, torch, m)
    images = make_images(tool, os.path.join(work, "img"), SAMPLES, 28, 28)
    tf = ingot.ImageTransform((1, 28, 28), mean=0.286, std=0.353, field="pgm")
    steps += run_pair(ingot, torch, images, tf)
    ingot.finalize()
    print(f"python.binding.gpu: OK ({steps} GPU batches byte-identical to host batches)")


if __name__ == "__main__":
    main()
