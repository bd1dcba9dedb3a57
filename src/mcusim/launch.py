"""The `mcusim` console script. Its first act is to take SIGINT and SIGTERM: the imports, numba's
loading and the simulator's construction take most of a second, and a Ctrl-C there would
otherwise end in a traceback. Until `mcusim run` starts its run (cli._interruptible) a signal
ends the process with one line and exit status 128 + signal: nothing was measured yet."""
import os
import signal
import sys


def before_run(signum, _frame) -> None:
    what = "before the run started" if sys.argv[1:2] == ["run"] else ""
    try:
        os.write(2, f"mcusim: interrupted {what}".rstrip().encode() + b"\n")
    except OSError:
        pass
    os._exit(128 + signum)


def guard() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:  # (ignored, as in a shell's background job: left so)
            signal.signal(signum, before_run)


def main():
    guard()
    # numpy's OpenBLAS starts a thread per core that spins while idle, taking CPU from the run
    # (perf: 2.5 % of a run's host time); mcusim does no linear algebra worth threads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .machine import numba_cache

    numba_cache.command_process = True
    from .cli import main as command_line
    return command_line()
