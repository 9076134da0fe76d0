"""Rank FAIL_RANK raises under torch's @record (which writes TORCHELASTIC_ERROR_FILE); the others exit 0."""
import os
from torch.distributed.elastic.multiprocessing.errors import record


def load_batch(n):
    raise ValueError(f"bad batch {n} on rank {os.environ['RANK']}")


@record
def main():
    if os.environ["RANK"] == os.environ.get("FAIL_RANK", "1"):
        load_batch(7)


if __name__ == "__main__":
    main()
