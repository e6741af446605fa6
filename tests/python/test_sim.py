"""ingot.simulate() (ctest python.binding.sim): ingot-sim's library from Python, no MPI, no init:
a described dataset on 2 nodes x 4 ranks with the peer cache holding part of it (the
environment's INGOT_CACHE_BYTES): every epoch's bytes add up to the dataset, the cache serves from
epoch 1, the figures come back in ingot-bench's names; a cluster that cannot be and a cost file
that is not one raise ingot.Error naming what is wrong.

usage: test_sim.py WORKDIR
"""
import os
import shutil
import sys

import ingot


def main():
    work = sys.argv[1]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    costs = os.path.join(work, "costs")
    with open(costs, "w") as f:
        f.write("version 2\nverify_bps 2e10\ncopy_bps 1e10\ndecode_bps 2e9\nsample_s 2e-6\n"
                "read_bps 1e10\nread_s 1e-6\npeer_bps 5e9\npeer_s 3e-5\nfault_bps 1e11\ndisk_bps 5e9\n"
                "get_s 0\nget_bps 0\nstore_bps 0\nget_rate 0\n")
    r = ingot.simulate(samples=4096, sample_size=16384, shard_size=1 << 20, nodes=2,
                       ranks_per_node=4, cores=8, epochs=3, batch=256, compute_ms=1,
                       costs=costs)
    assert r["ranks"] == 8 and len(r["epochs"]) == 3, r
    total = r["dataset_bytes"]
    for e in r["epochs"]:
        got = e["bytes_storage"] + e["bytes_peer"] + e["bytes_local"]
        assert got == total, (e, total)
        assert e["wall_s"] > 0 and 0 < e["au"] <= 1, e
    assert r["epochs"][0]["bytes_storage"] == total, r["epochs"][0]
    cached = r["epochs"][1]["bytes_peer"] + r["epochs"][1]["bytes_local"]
    assert 0 < cached < total, r["epochs"][1]
    assert r["cache_bytes_needed"] >= total, r
    print("simulate: 3 epochs of 8 ranks; the cache serves %d of %d bytes from epoch 1"
          % (cached, total))
    for kwargs, words in (({"samples": 100, "nodes": 0, "costs": costs}, "--nodes is 0"),
                          ({"samples": 100, "costs": os.path.join(work, "none")}, "cannot read"),
                          ({"samples": 100, "cores": 0, "costs": costs}, "--cores is 0"),
                          ({"samples": 100, "costs": costs,
                            "topology": os.path.join(work, "no-such.xml")}, "no-such.xml")):
        try:
            ingot.simulate(**kwargs)
        except ingot.Error as err:
            assert words in str(err), (words, str(err))
            print("refused: %s" % words)
        else:
            raise AssertionError("accepted: %s" % kwargs)
    try:
        ingot.simulate(costs=costs)
    except ValueError as err:
        print("refused: %s" % err)
    else:
        raise AssertionError("accepted a simulation without a dataset")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
