#!/usr/bin/python3
"""The object store's landing hash by layout (by hand; issue 34): bytes_hashed_landing against
bytes_read of ingot-bench over one SeaweedFS (global order, 192 samples of 100 KiB, GETs of
64 KiB, pieces of 16 KiB, no hedges, 2 epochs) on 1 rank, 4 ranks of one node and 2 emulated
nodes x 2 ranks. Runs under tests/netns/nodes.sh (root), which makes the nodes:

  OBJSTORE_WEED=BUILD/objstore-venv/bin/weed tests/netns/nodes.sh /tmp/ln 2,2 -- \\
      /usr/bin/python3 tests/perf/landing_nodes.py BUILD
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "source", "objstore"))
import e2e  # noqa: E402


class Args:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.apps = os.path.join(self.build, "apps")
        self.mpiexec, self.keep, self.verbose = "mpiexec", False, False


def main():
    a = Args(sys.argv[1] if len(sys.argv) > 1 else "build")
    t = e2e.E2E(a)
    try:
        hosts, bridge = e2e.nodes_bridge()
        t.start(ip=bridge)
        _, url = e2e.small_dataset(t, samples=192, size="100KiB", shard="2MiB")
        env = t.env(INGOT_ORDER="full", INGOT_S3_PART_SIZE="64KiB", INGOT_HASH_PIECE="16KiB",
                    INGOT_S3_HEDGE=0, OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
        xs = [x for k in env if k.startswith(("INGOT_", "AWS_")) for x in ("-x", k)]
        js = os.path.join(t.work, "bench.json")
        bench = [t.app("ingot-bench"), "--manifest", url, "--no-progress", f"--json={js}",
                 "--batch", "16", "--epochs", "2"]
        launch = os.environ["NODES_MPIRUN_ARGS"].split()
        nodes = ",".join(f"{h}:2" for h in hosts[:2])
        one_node = [a.mpiexec, "--oversubscribe", "-np", "4"] + xs + bench
        two_nodes = [a.mpiexec] + launch + ["--host", nodes, "-np", "4"] + xs + bench
        for name, cmd in [("1 rank", bench), ("4 ranks, 1 node", one_node),
                          ("2 nodes x 2 ranks", two_nodes)]:
            t.run(cmd, env=env, timeout=180)
            g = json.load(open(js))["aggregate"]
            print(f"{name}: samples {g['samples']:.0f}, bytes read {g['bytes_read']:.0f}, hashed "
                  f"as they landed {g['bytes_hashed_landing']:.0f} "
                  f"({g['bytes_hashed_landing'] / g['bytes_read']:.3f}), re-read "
                  f"{g['reread_storage']:.0f}, GETs {g['store_requests']:.0f}")
    finally:
        t.stop()


if __name__ == "__main__":
    main()
