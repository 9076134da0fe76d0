"""Makes a wheel that carries the unpacked release archive, so that `pip install` (or `pipx install`)
of the local file gives a working `runjob` command with no JDK and no Maven.

The wheel is a platform wheel (the archive's runtime is Linux x86-64 or aarch64 with glibc). Its
package `runjob_release` holds the archive's directory as it is; the console script `runjob` runs
that directory's bin/runjob. Files keep their executable bits (pip restores them); symbolic links,
which wheels cannot hold (the runtime's legal/ notices), are stored as copies of their targets.

Usage: make-wheel.py STAGED_DIR VERSION OUT_DIR   (run by make-archive.sh)
"""
import base64
import hashlib
import os
import platform
import re
import stat
import sys
import zipfile

FIXED_TIME = (1980, 1, 1, 0, 0, 0)

LAUNCHER = '''"""runjob, installed from its release wheel: runs the release's own bin/runjob."""
import os
import sys


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    launcher = os.path.join(here, "runjob", "bin", "runjob")
    os.execv(launcher, [launcher] + sys.argv[1:])
'''


def pep440(version):
    """0.1.0-SNAPSHOT -> 0.1.0.dev0; a release version stays as it is."""
    return re.sub(r"-SNAPSHOT$", ".dev0", version)


def main(staged, version, out):
    arch = {"x86_64": "x86_64", "aarch64": "aarch64"}.get(platform.machine(), platform.machine())
    name, ver = "runjob", pep440(version)
    tag = f"py3-none-manylinux_2_17_{arch}"
    info = f"{name}-{ver}.dist-info"
    wheel = os.path.join(out, f"{name}-{ver}-{tag}.whl")
    records = []

    def add(z, arcname, data, mode=0o644):
        zi = zipfile.ZipInfo(arcname, FIXED_TIME)
        zi.compress_type = zipfile.ZIP_DEFLATED
        zi.external_attr = (stat.S_IFREG | mode) << 16
        z.writestr(zi, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        records.append(f"{arcname},sha256={digest},{len(data)}")

    tmp = wheel + ".tmp"
    with zipfile.ZipFile(tmp, "w", compresslevel=6) as z:
        add(z, "runjob_release/__init__.py", LAUNCHER.encode())
        for root, dirs, files in os.walk(staged):
            dirs.sort()
            for f in sorted(files):
                path = os.path.join(root, f)
                rel = os.path.relpath(path, staged)
                with open(path, "rb") as fh:  # a link is read through: its target's bytes
                    data = fh.read()
                executable = os.stat(path).st_mode & 0o111
                add(z, "runjob_release/runjob/" + rel, data, 0o755 if executable else 0o644)
        add(z, f"{info}/METADATA", (
            "Metadata-Version: 2.1\n"
            f"Name: {name}\nVersion: {ver}\n"
            "Summary: Launch distributed training jobs on several GPU machines from one YAML file\n"
            "License: MIT\nRequires-Python: >=3.8\n").encode())
        add(z, f"{info}/WHEEL", (
            "Wheel-Version: 1.0\nGenerator: runjob make-wheel.py\nRoot-Is-Purelib: false\n"
            f"Tag: {tag}\n").encode())
        add(z, f"{info}/entry_points.txt", b"[console_scripts]\nrunjob = runjob_release:main\n")
        record = "\n".join(records + [f"{info}/RECORD,,"]) + "\n"
        zi = zipfile.ZipInfo(f"{info}/RECORD", FIXED_TIME)
        zi.compress_type = zipfile.ZIP_DEFLATED
        zi.external_attr = (stat.S_IFREG | 0o644) << 16
        z.writestr(zi, record)
    os.replace(tmp, wheel)
    print(f"runjob: {wheel} ({os.path.getsize(wheel) >> 20} MiB)")


if __name__ == "__main__":
    main(*sys.argv[1:4])
