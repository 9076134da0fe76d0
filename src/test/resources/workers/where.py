"""Prints where runjob placed it: its rank, the world size, its node rank and the master's address."""
import os

e = os.environ
print(f"rank {e['RANK']} of {e['WORLD_SIZE']} node {e['NODE_RANK']} master {e['MASTER_ADDR']}", flush=True)
