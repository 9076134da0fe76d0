"""Writes FILES small files under out/many/ and one SPARSE_MIB MiB sparse file out/sparse.bin (8 bytes of data)."""
import os

import common

if common.RANK == 0:
    os.makedirs("out/many", exist_ok=True)
    for i in range(int(os.environ["FILES"])):
        with open(f"out/many/f{i:06d}.txt", "w") as f:
            f.write(f"file {i}\n")
    with open("out/sparse.bin", "wb") as f:
        f.write(b"head")
        f.seek(int(os.environ["SPARSE_MIB"]) * 1024 * 1024 - 4)
        f.write(b"tail")
print(f"rank {common.RANK} done", flush=True)
