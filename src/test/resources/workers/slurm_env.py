"""Reads its place the way Lightning's SLURMEnvironment does (its logic, written down here) and
prints it beside runjob's RANK: global rank SLURM_PROCID, local rank SLURM_LOCALID, node rank
SLURM_NODEID, world size SLURM_NTASKS; its validation compares SLURM_NTASKS_PER_NODE with the
node's devices and SLURM_NNODES with the node count, as int()."""
import os

e = os.environ
world_size = int(e["SLURM_NTASKS"])
global_rank = int(e["SLURM_PROCID"])
local_rank = int(e["SLURM_LOCALID"])
node_rank = int(e["SLURM_NODEID"])
per_node = int(e["SLURM_NTASKS_PER_NODE"])
nodes = int(e["SLURM_NNODES"])
print(f"RANK {e['RANK']} LOCAL_RANK {e['LOCAL_RANK']} NODE_RANK {e['NODE_RANK']} WORLD_SIZE {e['WORLD_SIZE']}"
      f" slurm {global_rank} {local_rank} {node_rank} {world_size} per-node {per_node} nodes {nodes}"
      f" tasks {e['SLURM_TASKS_PER_NODE']}", flush=True)
