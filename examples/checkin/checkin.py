"""Proves the launcher's environment contract with nothing but Python's standard library.

Rank 0 listens on MASTER_ADDR:MASTER_PORT; every other rank connects (retrying until rank 0 is up)
and reports its RANK, LOCAL_RANK, node and the world it was told about. Rank 0 checks that exactly
WORLD_SIZE distinct ranks checked in, all agreeing on WORLD_SIZE, prints the table and answers each
rank "ok". Anything wrong exits non-zero. This is a check of the contract, not a collective library.
"""
import json
import os
import socket
import sys
import time

TIMEOUT_S = float(os.environ.get("CHECKIN_TIMEOUT_S", "30"))


def env(name):
    value = os.environ.get(name)
    if value is None:
        print(f"checkin: {name} is not set; start me with runjob", file=sys.stderr)
        sys.exit(2)
    return value


def me():
    return {
        "rank": int(env("RANK")),
        "local_rank": int(env("LOCAL_RANK")),
        "world_size": int(env("WORLD_SIZE")),
        "local_world_size": int(env("LOCAL_WORLD_SIZE")),
        "node_rank": int(env("NODE_RANK")),
        "node": env("RUNJOB_NODE"),
        "pid": os.getpid(),
    }


def serve(info):
    world = info["world_size"]
    seen = {0: info}
    conns = []
    with socket.create_server((env("MASTER_ADDR"), int(env("MASTER_PORT"))), reuse_port=False) as server:
        server.settimeout(TIMEOUT_S)
        while len(seen) < world:
            conn, _ = server.accept()
            conn.settimeout(TIMEOUT_S)
            other = json.loads(conn.makefile("r").readline())
            if other["rank"] in seen:
                print(f"checkin: rank {other['rank']} checked in twice", file=sys.stderr)
                return 1
            if other["world_size"] != world:
                print(f"checkin: rank {other['rank']} says WORLD_SIZE {other['world_size']}, not {world}", file=sys.stderr)
                return 1
            seen[other["rank"]] = other
            conns.append(conn)
        if sorted(seen) != list(range(world)):
            print(f"checkin: ranks {sorted(seen)} are not 0..{world - 1}", file=sys.stderr)
            return 1
        print(f"all {world} ranks checked in")
        print(f"{'rank':>4} {'local':>5} {'node_rank':>9}  node")
        for rank in sorted(seen):
            r = seen[rank]
            print(f"{rank:>4} {r['local_rank']:>5} {r['node_rank']:>9}  {r['node']}")
        for conn in conns:
            conn.sendall(b"ok\n")
            conn.close()
    return 0


def join(info):
    addr = (env("MASTER_ADDR"), int(env("MASTER_PORT")))
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        try:
            conn = socket.create_connection(addr, timeout=TIMEOUT_S)
            break
        except OSError:
            if time.monotonic() > deadline:
                print(f"checkin: rank 0 never listened on {addr[0]}:{addr[1]}", file=sys.stderr)
                return 1
            time.sleep(0.05)
    with conn:
        conn.sendall((json.dumps(info) + "\n").encode())
        answer = conn.makefile("r").readline().strip()
    if answer != "ok":
        print(f"checkin: rank 0 answered {answer!r}", file=sys.stderr)
        return 1
    print(f"rank {info['rank']} (local {info['local_rank']}) on {info['node']} checked in")
    return 0


if __name__ == "__main__":
    info = me()
    sys.exit(serve(info) if info["rank"] == 0 else join(info))
