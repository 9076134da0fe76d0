"""Every rank joins a gloo group; CULPRIT exits CULPRIT_CODE once all are in an all_reduce loop,
and every other rank then fails on its own ("Connection closed by peer") a few tenths of a
second later. Two ways make the culprit's exit reach runjob after its victims' do:
LINGER_S: the culprit first starts a helper that keeps its stdout and stderr (and nothing else)
open that long, so its pipes outlive its program;
SLOW_TEARDOWN: the culprit creates this file just before it exits, and the container runtime's
poststop hook (set up by the test) takes seconds to tear down the first container that ends
after the file appears, which is the culprit's."""
import os
import subprocess
import sys
import torch
import torch.distributed as dist
import common

dist.init_process_group("gloo")
dist.barrier()
common.pidfile(f"rank-{common.RANK}.pid")
if common.RANK == int(os.environ["CULPRIT"]):
    linger = float(os.environ.get("LINGER_S", "0"))
    if linger > 0:
        subprocess.Popen(["sleep", str(linger)], close_fds=True)
    print(f"culprit rank {common.RANK} exits {os.environ['CULPRIT_CODE']}", file=sys.stderr, flush=True)
    if "SLOW_TEARDOWN" in os.environ:
        open(os.environ["SLOW_TEARDOWN"], "w").close()
    os._exit(int(os.environ["CULPRIT_CODE"]))
t = torch.ones(1)
while True:
    dist.all_reduce(t)
