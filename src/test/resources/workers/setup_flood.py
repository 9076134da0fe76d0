"""A setup that floods its output: one line of LONG_MIB MiB of 'x', then LINES lines of 1024 bytes
(with the newline) 'setup line NNNNNNNN yyy...', as fast as the pipe takes them."""
import sys

long_mib, lines = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
block = b"x" * (1 << 20)
for _ in range(long_mib):
    out.write(block)
out.write(b"\n")
for i in range(lines):
    out.write(b"setup line %08d " % i + b"y" * 1003 + b"\n")
out.flush()
