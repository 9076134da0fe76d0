"""One NCCL all-reduce across every worker of a job: each rank contributes RANK+1 on its own GPU.

Prints, per rank, the device it got (CUDA_VISIBLE_DEVICES is set by runjob, so it is always cuda:LOCAL_RANK
of the visible ones), its PCI bus id, and the reduced value, which must be WORLD_SIZE*(WORLD_SIZE+1)/2.
Exits non-zero when the sum is wrong or no GPU is visible.
"""
import os
import sys

import torch
import torch.distributed as dist


def main():
    rank, local_rank, world = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])
    if not torch.cuda.is_available():
        print(f"rank {rank}: no CUDA device visible (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')})", file=sys.stderr)
        return 2
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", init_method=f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
                            rank=rank, world_size=world)
    x = torch.tensor([float(rank + 1)], device="cuda")
    dist.all_reduce(x)
    expected = world * (world + 1) / 2
    props = torch.cuda.get_device_properties(local_rank)
    bus = getattr(props, "pci_bus_id", "?")
    print(f"rank {rank} local {local_rank} on {props.name} bus {bus}: all_reduce = {x.item():.0f} (expected {expected:.0f})", flush=True)
    dist.destroy_process_group()
    return 0 if x.item() == expected else 1


if __name__ == "__main__":
    sys.exit(main())
