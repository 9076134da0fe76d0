"""Prints how many CPUs this rank may run on (its affinity, as Slurm's cgroup and task plugins set it)."""
import os
import common

print(f"rank {common.RANK} cpus {len(os.sched_getaffinity(0))}", flush=True)
