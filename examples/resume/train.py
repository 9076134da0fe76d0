"""A training script written torchrun-style that checkpoints and resumes.

Reads the launcher's contract from the environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT, TORCHELASTIC_RESTART_COUNT), trains nn.Linear(2, 2) with DDP (gloo on CPU, NCCL on
GPUs) for EPOCHS epochs, and after every epoch rank 0 saves a snapshot (model, optimizer, next
epoch, and the run id it belongs to) to SNAPSHOT (default snapshot.pt in the current directory, the run's own). On start
every rank loads the snapshot when it exists *and was written by this run* (RUNJOB_RUN_ID, or
TORCHELASTIC_RUN_ID under torchrun): a snapshot left by an earlier run is ignored, not resumed.

To see a restart: FAIL_AT_EPOCH=E makes rank FAIL_RANK (default 1) exit 3 at the start of epoch E,
on the first attempt only; with failure.max_restarts >= 1 the whole group restarts and resumes at
epoch E from the snapshot.
"""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> int:
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    run_id = os.environ.get("RUNJOB_RUN_ID", os.environ.get("TORCHELASTIC_RUN_ID", "none"))
    epochs = int(os.environ.get("EPOCHS", "5"))
    snapshot = os.environ.get("SNAPSHOT", "snapshot.pt")
    use_cuda = torch.cuda.is_available() and os.environ.get("CUDA_VISIBLE_DEVICES", "") != ""
    dist.init_process_group("nccl" if use_cuda else "gloo",
                            init_method=f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
                            rank=rank, world_size=world)
    device = torch.device(f"cuda:{local_rank}") if use_cuda else torch.device("cpu")
    torch.manual_seed(0)
    model = DDP(nn.Linear(2, 2).to(device), device_ids=[local_rank] if use_cuda else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    start = 0
    if os.path.exists(snapshot):
        state = torch.load(snapshot, map_location=device)
        if state.get("run_id") == run_id:
            model.module.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            start = state["epoch"]
            print(f"rank {rank} attempt {attempt} resumed at epoch {start}", flush=True)
        else:
            print(f"rank {rank} attempt {attempt} ignored a snapshot of run {state.get('run_id')}", flush=True)

    x = torch.full((1, 2), 0.1 * (rank + 1), device=device)
    for epoch in range(start, epochs):
        if attempt == 0 and epoch == int(os.environ.get("FAIL_AT_EPOCH", "-1")) and rank == int(os.environ.get("FAIL_RANK", "1")):
            print(f"rank {rank} fails at epoch {epoch}", flush=True)
            return 3
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), torch.zeros_like(x)).backward()
        optimizer.step()
        dist.barrier()
        if rank == 0:
            tmp = snapshot + ".tmp"
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch + 1,
                        "run_id": run_id}, tmp)
            os.replace(tmp, snapshot)
        dist.barrier()
        print(f"rank {rank} attempt {attempt} finished epoch {epoch}", flush=True)
        time.sleep(float(os.environ.get("EPOCH_SECONDS", "0")))
    weights = [round(v, 6) for v in model.module.weight.detach().cpu().flatten().tolist()]
    print(f"rank {rank} weights {weights}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
