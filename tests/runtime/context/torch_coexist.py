#!/usr/bin/python3
"""ingot and PyTorch's CUDA runtime in one process (ctest runtime.context.torch_coexist).

PyTorch allocates and runs a kernel first; then ingot (libingot through ctypes) delivers batches
to the same device; PyTorch's stream waits on the batch's ready event (cuStreamWaitEvent) and a
PyTorch kernel reads the batch through its address (__cuda_array_interface__), compared with the
same step delivered into host memory; PyTorch runs a kernel again at the end. Exits 77 with the
reason where PyTorch or a CUDA device it can use is absent.
usage: torch_coexist.py LIBINGOT INGOT_MANIFEST_TOOL
"""
import ctypes as C
import os
import subprocess
import sys
import tempfile

SKIP = 77
SAMPLES, BATCH, DEPTH, STEPS = 64, 8, 4, 6
HOST = -1
# ingot_loader_params_field bits (include/ingot/loader.h)
F_MANIFEST, F_BATCH, F_SEED, F_DEPTH, F_DEVICE = 1 << 0, 1 << 1, 1 << 2, 1 << 4, 1 << 6


class LoaderParams(C.Structure):
    """ingot_loader_params_t, member for member."""
    _fields_ = [("field_mask", C.c_uint64), ("manifest_path", C.c_char_p),
                ("global_batch", C.c_uint64), ("seed", C.c_uint64), ("epochs", C.c_uint64),
                ("depth", C.c_uint32), ("memory_budget", C.c_uint64), ("device", C.c_int),
                ("transform", C.c_void_p), ("transform_arg", C.c_void_p),
                ("sample_out_size", C.c_size_t), ("verify", C.c_int),
                ("skip_budget", C.c_uint64), ("cursor", C.c_void_p), ("tail", C.c_int),
                ("order_mode", C.c_int), ("order_window", C.c_uint32),
                ("readers", C.c_uint32), ("workers", C.c_uint32)]


class Batch(C.Structure):
    """ingot_batch_t, member for member."""
    _fields_ = [("step", C.c_uint64), ("epoch", C.c_uint64), ("epoch_step", C.c_uint64),
                ("count", C.c_uint32), ("device", C.c_int), ("data", C.c_void_p),
                ("bytes", C.c_size_t), ("offsets", C.c_void_p), ("lengths", C.c_void_p),
                ("labels", C.c_void_p), ("indices", C.c_void_p), ("keys", C.c_void_p),
                ("ready_event", C.c_void_p), ("token", C.c_uint64)]


class DeviceBytes:
    """A batch's device bytes as PyTorch sees them: through their address only."""
    def __init__(self, ptr, size):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1",
                                         "data": (ptr, True), "version": 3}


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def check(ok, what):
    if not ok:
        print("FAIL: " + what, file=sys.stderr)
        sys.exit(1)


def make_data(tool, root):
    src = os.path.join(root, "in")
    os.makedirs(src)
    for i in range(SAMPLES):
        with open(os.path.join(src, "s%04d.bin" % i), "wb") as f:
            f.write(bytes((i * 31 + j) & 0xFF for j in range(500 + 37 * i)))
    out = os.path.join(root, "shards")
    subprocess.run([tool, "pack", src, "-o", out, "--shard-size", "64KiB"], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(out, "manifest.ingot")


def loader(lib, ctx, manifest, device):
    p = LoaderParams(field_mask=F_MANIFEST | F_BATCH | F_SEED | F_DEPTH | F_DEVICE,
                     manifest_path=manifest.encode(), global_batch=BATCH, seed=5, depth=DEPTH,
                     device=device)
    l = C.c_void_p()
    check(lib.ingot_loader_create(ctx, C.byref(p), C.byref(l)) == 0, "loader on %d" % device)
    return l


def torch_kernel(torch):
    x = torch.arange(1 << 20, device="cuda", dtype=torch.int64)
    check(int((x * 2).sum().item()) == (1 << 20) * ((1 << 20) - 1), "PyTorch kernel result")


def run(torch, lib, cuda, manifest):
    ctx = C.c_void_p()
    check(lib.ingot_init(None, C.byref(ctx)) == 0, "ingot_init")
    dev = torch.cuda.current_device()
    host, gpu = loader(lib, ctx, manifest, HOST), loader(lib, ctx, manifest, dev)
    stream = torch.cuda.current_stream()
    for step in range(STEPS):
        hb, gb = Batch(), Batch()
        check(lib.ingot_loader_next(host, C.byref(hb)) == 0, "host batch %d" % step)
        check(lib.ingot_loader_next(gpu, C.byref(gb)) == 0, "GPU batch %d" % step)
        check(gb.device == dev and gb.ready_event and gb.bytes == hb.bytes, "GPU batch fields")
        # The trainer's stream waits on the ready event, then a PyTorch kernel reads the batch.
        check(cuda.cuStreamWaitEvent(C.c_void_p(stream.cuda_stream),
                                     C.c_void_p(gb.ready_event), 0) == 0, "cuStreamWaitEvent")
        seen = torch.as_tensor(DeviceBytes(gb.data, gb.bytes), device="cuda")
        want = torch.frombuffer(bytearray(C.string_at(hb.data, hb.bytes)), dtype=torch.uint8)
        check(bool(torch.equal(seen, want.to("cuda"))), "step %d: batch differs" % step)
        check(lib.ingot_loader_release(host, C.byref(hb)) == 0, "release host")
        check(lib.ingot_loader_release(gpu, C.byref(gb)) == 0, "release GPU")
    lib.ingot_loader_destroy(gpu)
    lib.ingot_loader_destroy(host)
    lib.ingot_finalize(ctx)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        import torch
    except ImportError as e:
        skip("PyTorch is not installed (%s)" % e)
    if not torch.cuda.is_available():
        skip("PyTorch %s has no usable CUDA device (built with CUDA %s)"
             % (torch.__version__, torch.version.cuda))
    torch_kernel(torch)
    lib = C.CDLL(sys.argv[1], mode=C.RTLD_GLOBAL)
    cuda = C.CDLL("libcuda.so.1")
    with tempfile.TemporaryDirectory() as root:
        run(torch, lib, cuda, make_data(sys.argv[2], root))
    torch_kernel(torch)
    torch.cuda.synchronize()
    print("torch coexist ok: %d steps" % STEPS)


if __name__ == "__main__":
    main()
