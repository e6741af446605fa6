"""ingot.init() under torchrun's variables (ctest python.binding.launch): two processes started
as torchrun starts them (RANK, WORLD_SIZE=2, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) are each a
singleton world; each must be refused with INGOT_ERR_MISMATCH naming WORLD_SIZE=2 and how to
launch, with one error line on stderr. The same variables with WORLD_SIZE=1 are a world of one
as it should be: accepted. (The other launchers' variables: tests/runtime/context/
launch_check.sh; Debian's torch 1.13 torchrun itself fails before it starts any process here.)

usage: test_launch.py
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import require_torch  # noqa: E402

HINT = "start the ranks through MPI: mpirun -np N ..., or srun --mpi=pmix ..."
INIT = ("import ingot\n"
        "try:\n    ingot.init()\n    print('ok', ingot.rank(), ingot.world_size())\n"
        "except ingot.Error as e:\n    print(e.status); print(e.message)\n")


def torchrun_env(rank, world):
    env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
               LOCAL_WORLD_SIZE=str(world), GROUP_RANK="0", MASTER_ADDR="127.0.0.1",
               MASTER_PORT="29500", TORCHELASTIC_RUN_ID="none")
    for k in [k for k in env if k.startswith(("OMPI_COMM_WORLD", "PMI_", "SLURM_"))]:
        del env[k]  # only torchrun's launch here
    return env


def check_refused():
    procs = [subprocess.Popen([sys.executable, "-c", INIT], env=torchrun_env(r, 2),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in (0, 1)]  # started together, as torchrun starts them
    for r, p in enumerate(procs):
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, f"rank {r}: exit {p.returncode}\n{out}{err}"
        lines = out.splitlines()
        assert lines and lines[0] == "INGOT_ERR_MISMATCH", f"rank {r}: not refused: {out}{err}"
        msg = lines[1]
        for needle in ("MPI's world is this process alone", "WORLD_SIZE=2 (torchrun)", HINT,
                       "INGOT_CHECK_LAUNCH=n"):
            assert needle in msg, f"rank {r}: {needle!r} not in {msg!r}"
        errors = [line for line in err.splitlines() if "INGOT error" in line]
        assert len(errors) == 1 and "WORLD_SIZE=2 (torchrun)" in errors[0], \
            f"rank {r}: expected one error line naming WORLD_SIZE:\n{err}"


def check_world_of_one():
    out = subprocess.run([sys.executable, "-c", INIT], env=torchrun_env(0, 1),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok 0 1", out.stdout + out.stderr
    assert "INGOT error" not in out.stderr, out.stderr


def main():
    require_torch()  # the module loads here (the binding's tests skip alike)
    check_refused()
    check_world_of_one()
    print("launch checks passed")


if __name__ == "__main__":
    main()
