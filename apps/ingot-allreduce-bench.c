/*
 * ingot-allreduce-bench: ingot's gradient all-reduce measured through the public API, in two
 * modes.
 *
 * Sweep (default), as nccl-tests' all_reduce_perf: float32 sums of -b .. -e bytes (times -f),
 * out of place and in place, each ingot_allreduce_start + ingot_request_wait timed over -n
 * iterations after -w warm-up. time = the max over ranks of each rank's mean per-iteration time
 * (barrier before the loop); algbw = size / time; busbw = algbw * 2(n-1)/n for n ranks (the
 * bytes each rank's link carries in a ring all-reduce, so busbw compares across rank counts, as
 * nccl-tests defines it). The reference is MPI_Allreduce (MPI_IN_PLACE in place) on the same
 * buffers, timed the same way in the same run: ratio = ingot busbw / MPI busbw. Buffers are
 * allocated once at the largest size and pre-faulted. After each timed loop one more ingot
 * all-reduce of integer-valued floats is compared element by element with the exact sum (every
 * partial sum is an integer well inside float's 24 bits, so any order of summation is exact):
 * a row that differs is FAIL and the exit status is 1.
 *
 * Overlap (--overlap): ResNet-50's 161 gradient tensors (25,557,032 parameters, built from its
 * architecture) registered with ingot_grads_register (AVG), DDP's buckets. Each part is measured
 * alone first: T_ar, the all-reduce (every gradient ready at once, then ingot_grads_wait; the
 * median of 5 steps), and with --manifest the loader (batches taken back to back, per step).
 * Then --steps steps of an emulated trainer: next batch, forward (a third of --compute-ms,
 * default T_ar), backward (two thirds, the tensors last to first, each marked ready after its
 * share), ingot_grads_wait, release. Overlap efficiency = max(compute, T_ar, ingest) / median
 * step time: 1 when the shorter parts hide entirely behind the longest. Exposed all-reduce = the
 * time blocked in ingot_grads_wait (and exposed_ns of ingot_comm_stats); hidden = T_ar - exposed.
 *
 * Output: a header block (versions, config, rank map, backend and why), the table, and with
 * --json one JSON object (rank 0). Exit status: 0; 1 when an ingot call fails (its status and
 * ingot_last_error() printed) or a result is wrong; 2 for a bad option; 77 when the backend is
 * nccl (device memory; this program allocates host buffers). Modules: apps/allreduce-bench/.
 */
#include "allreduce-bench/arb.h"
#include "common/cli.h"

static int run_sweep(const arb_args_t *a, arb_setup_t *s)
{
    arb_sweep_t sw = {NULL, 0};
    int rc = ARB_EXIT_FAIL;
    if (arb_sweep_run(a, s, &sw) == INGOT_OK) {
        uint64_t wrong = 0;
        for (size_t i = 0; i < sw.nrows; i++) wrong += sw.rows[i].oop.wrong + sw.rows[i].ip.wrong;
        rc = s->rank == 0 && arb_sweep_report(a, s, &sw) != 0 ? ARB_EXIT_FAIL : 0;
        if (wrong != 0) {
            if (s->rank == 0) {
                fprintf(stderr, ARB_TOOL ": %llu elements differ from the exact sum\n",
                        (unsigned long long)wrong);
            }
            rc = ARB_EXIT_FAIL;
        }
    }
    arb_teardown(s);
    arb_sweep_free(&sw);
    return rc;
}

static int run_overlap(const arb_args_t *a, arb_setup_t *s)
{
    arb_overlap_t o;
    int rc = ARB_EXIT_FAIL;
    if (arb_overlap_run(a, s, &o) == INGOT_OK) {
        rc = s->rank == 0 && arb_overlap_report(a, s, &o) != 0 ? ARB_EXIT_FAIL : 0;
    }
    arb_teardown(s); /* before the gradients' memory: the communicator holds it */
    arb_overlap_free(&o);
    return rc;
}

int main(int argc, char **argv)
{
    arb_args_t a;
    arb_setup_t s;
    cli_quiet_begin(); /* every rank parses; a usage error is said once */
    arb_args_parse(argc, argv, &a);
    cli_quiet_end();
    int rc = arb_setup(&a, &s);
    if (rc != 0) {
        return rc;
    }
    return a.overlap ? run_overlap(&a, &s) : run_sweep(&a, &s);
}
