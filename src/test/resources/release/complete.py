"""Completes a command line as a user at an interactive bash would: starts bash on a pseudo-terminal,
sources a completion script, types LINE and one TAB, then puts "echo COMPLETED: " before the line
and enters it (Ctrl-A, text, Enter: readline takes these keys in order, after the completion).
Prints what bash showed (escape sequences removed): the matches it listed, and one line
"COMPLETED: LINE..." with the line as completed. Each step waits for bash, with a deadline.
Usage: complete.py SCRIPT LINE"""
import os
import pty
import re
import select
import sys
import tempfile
import time

PROMPT = "READY> "


def main(script, line):
    inputrc = tempfile.NamedTemporaryFile("w", suffix=".inputrc", delete=False)
    inputrc.write("set enable-bracketed-paste off\nset show-all-if-ambiguous on\nset bell-style none\n")
    inputrc.close()
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["PS1"] = PROMPT
        os.environ["INPUTRC"] = inputrc.name
        os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
    seen = ""
    raw = b""

    def until(text, seconds=20):
        nonlocal seen, raw
        deadline = time.time() + seconds
        while text not in seen:
            if time.time() > deadline:
                sys.exit(f"complete.py: no {text!r} within {seconds} s; bash printed {seen!r}")
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                raw += os.read(fd, 65536)
                # without the terminal's escape sequences and carriage returns
                seen = re.sub(r"\x1b\[[0-9;?]*[@-~]", "", raw.decode(errors="replace")).replace("\r", "")

    until(PROMPT)
    os.write(fd, f"source {script}; echo SOURCED\n".encode())
    until("SOURCED\n" + PROMPT)
    seen, raw = "", b""
    os.write(fd, (line + "\t\x01echo COMPLETED: \n").encode())
    until("\nCOMPLETED: ")
    until("\n" + PROMPT)
    os.unlink(inputrc.name)
    print(seen)
    os.write(fd, b"exit\n")
    os.waitpid(pid, 0)


main(sys.argv[1], sys.argv[2])
