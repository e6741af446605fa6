/*
 * The launch check of ingot_init (launch.c): a process alone in MPI's world while a launcher's
 * variables say the job has more processes.
 */
#ifndef INGOT_RUNTIME_LAUNCH_H
#define INGOT_RUNTIME_LAUNCH_H

#include <ingot/status.h>
#include <stdbool.h>

/**
 * When MPI_COMM_WORLD is this process alone, read the launchers' task counts (WORLD_SIZE,
 * SLURM_STEP_NUM_TASKS or SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE). One that says more
 * than one process means the job was started without MPI's wire-up, and each of its processes
 * would take the whole dataset as its own slice.
 *
 * MPI must be initialised; no collective call (a world of one has nobody to agree with, and a
 * larger world returns at once).
 * @param refuse  INGOT_CHECK_LAUNCH: refuse; false: say so at info level only.
 * @return INGOT_OK; INGOT_ERR_MISMATCH (logged: each variable with its value and what set it,
 *         and how to launch the ranks).
 */
ingot_status_t ingot_launch_check(bool refuse);

#endif
