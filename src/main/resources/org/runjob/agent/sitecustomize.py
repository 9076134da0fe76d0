# runjob's stack hook, on PYTHONPATH of every worker the runjob agent starts.
#
# It registers faulthandler on a real-time signal, so that the agent can ask any Python process of
# a rank for the stack of every thread at any time (a rank hung in C code included) without a
# change to the training script. The dump goes to RUNJOB_STACKS_DIR/PID, whose first line names
# the signal and the main thread: the agent signals only a process whose file says so and whose
# handler is still installed. A forked child registers again, with a file of its own.
# Then the next sitecustomize on sys.path (the system's, or the job's own) runs as it would have.
import os
import sys


def _runjob_register():
    folder = os.environ.get("RUNJOB_STACKS_DIR")
    if not folder:
        return
    try:
        # the C modules, not signal and threading: those cost 5 ms of every Python start (enum)
        import _signal
        import _thread
        import faulthandler
        signum = _signal.SIGRTMIN + 5
        path = os.path.join(folder, str(os.getpid()))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        out = os.fdopen(fd, "w", buffering=1)
        faulthandler.register(signum, file=out, all_threads=True, chain=False)
        # the header last: the agent signals only a process whose file has it, so a forked child is
        # never signalled while it still holds its parent's registration (its parent's file)
        # at start-up, and in a forked child, the thread that runs this is the main thread
        out.write("runjob-stacks %d 0x%016x\n" % (signum, _thread.get_ident()))
        global _runjob_file
        _runjob_file = out
    except Exception:
        pass


def _runjob_next():
    # importlib.machinery, not importlib.util: that one costs 4 ms of every Python start (contextlib)
    import importlib.machinery
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = type(sys)(spec.name)
        module.__spec__, module.__loader__, module.__file__ = spec, spec.loader, spec.origin
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_runjob_file = None
_runjob_register()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_runjob_register)
_runjob_next()
