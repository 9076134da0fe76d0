"""Says which interpreter runs it, what the node's environment gave it, and whether it is in a container."""
import os
import sys

print(f"rank {os.environ['RANK']} python {sys.executable} script {os.environ.get('FROM_SCRIPT', '-')}"
      f" modules {os.environ.get('LOADEDMODULES', '-')} container {os.path.exists('/run/.containerenv')}", flush=True)
