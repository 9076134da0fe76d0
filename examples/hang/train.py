"""A training loop (gloo on CPU) in which one rank stops: rank STUCK_RANK (default 1) never
returns from stuck_here() at step STUCK_STEP (default 3), so every other rank waits in all_reduce
for it, prints nothing, and would wait for torch's own timeout (30 minutes). runjob's
failure.hang_timeout_s notices the silence, saves every rank's stacks and names the rank that
differs. STUCK_STEP=-1 never stops: a healthy run that prints every SLEEP_S seconds.
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def stuck_here():
    while True:
        time.sleep(3600)


def train(rank, steps, stuck_rank, stuck_step, sleep_s):
    total = torch.ones(1)
    for step in range(steps):
        if rank == stuck_rank and step == stuck_step:
            stuck_here()
        dist.all_reduce(total)
        print(f"rank {rank} step {step}", flush=True)
        time.sleep(sleep_s)


def main() -> int:
    if "RANK" not in os.environ:
        print("train.py: RANK is not set; start it with runjob (or torchrun)", file=sys.stderr)
        return 2
    rank = int(os.environ["RANK"])
    init = f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=int(os.environ["WORLD_SIZE"]))
    train(rank, int(os.environ.get("STEPS", "8")), int(os.environ.get("STUCK_RANK", "1")),
          int(os.environ.get("STUCK_STEP", "3")), float(os.environ.get("SLEEP_S", "0.2")))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
