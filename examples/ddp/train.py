"""The seed's DDP example: nn.Linear(2, 2) trained on a 4-row tensor split by DistributedSampler.

Reads the launcher's contract from the environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT), uses NCCL on GPUs and gloo on CPU, and prints, per rank, the row it trained on and the
weights after one step. DDP broadcasts rank 0's initial weights and averages gradients, so every
rank ends with identical weights.
"""
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main() -> int:
    if "RANK" not in os.environ:
        print("train.py: RANK is not set; start it with runjob (or torchrun)", file=sys.stderr)
        return 2
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    use_cuda = torch.cuda.is_available() and os.environ.get("CUDA_VISIBLE_DEVICES", "") != ""
    backend = "nccl" if use_cuda else "gloo"
    init = f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    dist.init_process_group(backend, init_method=init, rank=rank, world_size=world)
    device = torch.device(f"cuda:{local_rank}") if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    dist.barrier()

    torch.manual_seed(rank)  # different initial weights per rank: DDP must make them equal
    model = DDP(nn.Linear(2, 2).to(device), device_ids=[local_rank] if use_cuda else None)
    rows = torch.tensor([[0.1, 0.1], [0.2, 0.2], [0.3, 0.3], [0.4, 0.4]])
    data = TensorDataset(rows, torch.zeros(4, 2))
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=False)
    loader = DataLoader(data, batch_size=1, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        print(f"rank {rank} trained on row {x[0, 0].item():.1f}", flush=True)
    weights = [round(v, 6) for v in model.module.weight.detach().cpu().flatten().tolist()]
    print(f"rank {rank} weights {weights}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
