"""Writes awkward bytes: a 1 MiB line, invalid UTF-8, bytes that look like protocol frames, no final newline."""
import os
import sys

rank = int(os.environ["RANK"])
out = sys.stdout.buffer
out.write(b"x" * (1024 * 1024) + b"\n")
out.write(b"bad utf8: \xff\xfe\xc3\x28 end\n")
out.write(bytes([12, 0, 0, 0, 0, 0, 0, 0, 4]) + b"ping\x0e\x00\x00\x00\x01\n")
out.write(f"rank {rank} no newline at the end".encode())
out.flush()
sys.stderr.buffer.write(b"stderr without newline \xff")
sys.stderr.flush()
