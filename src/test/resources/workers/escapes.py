"""Prints one line holding terminal escapes (bold, then reset), as a worker may: it passes as written."""
import common

print(f"rank {common.RANK} says \x1b[1mbold\x1b[0m", flush=True)
