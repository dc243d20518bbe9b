"""The Ray node of this machine, watched while a command uses a cluster.

A driver talks to the cluster through the raylet of its own machine (which also holds the node's
object store). When that raylet dies (``kill -9``, the out-of-memory killer), Ray 2.60 ends the
driver from its C++ core the next time it touches the object store, at once or about 15 s later
("The connection to the plasma store is failed. Terminate the process.", exit code 1): no Python
exception, no ``finally``, no message of ours. It does the same a minute after the cluster's head
(its GCS) stops answering. Two watchers say what happened, what is kept and how to resume: a
thread (:class:`RayletWatch`) that sees the raylet gone while the driver still runs (the command
then stops its wait at once), and a small process beside the driver (:class:`EndNotice`) that
prints the line after Ray has ended the driver.

Run as a script, this file is that small process (``python ray_node_watch.py LOGS_DIR PID``).
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

#: Ray's core ends a driver (exit code 1) after logging one of these lines: (the line, what it means)
RAY_ENDS = ((b"The connection to the plasma store is failed. Terminate the process.",
             "the Ray node of this machine is gone (its raylet ended: killed, or out of memory?)"),
            (b"Failed to connect to GCS within",
             "the Ray cluster's head stopped answering (its GCS ended: the head node lost, out of memory, or "
             "'ray stop') for a minute"))
#: the line the driver sends its notice process when it ends by itself (nothing to add then)
_SETTLED = "\0settled"


def local_raylet_pid(ray) -> int | None:
    """The pid of the raylet of the Ray node this driver is connected to (a Ray instance this
    process started, or the node of this machine it joined); None where it cannot be told (an
    unexpected Ray version, no process table), and then nothing is watched."""
    try:
        import psutil  # Ray ships it (ray/thirdparty_files, on the path once ray is imported)
        from ray._private import ray_constants

        node = ray._private.worker._global_node
        started_here = node.all_processes.get(ray_constants.PROCESS_TYPE_RAYLET)
        if started_here:
            return started_here[0].process.pid
        wanted = f"--raylet_socket_name={node.raylet_socket_name}"
        for proc in psutil.process_iter(["cmdline"]):
            cmdline = proc.info["cmdline"] or []
            if cmdline and cmdline[0].endswith("raylet") and wanted in cmdline:
                return proc.pid
    except Exception:  # private parts of Ray that moved, or a process table we may not read
        return None
    return None


def is_running(pid: int) -> bool:
    """Whether process ``pid`` runs (a killed child of ours not yet reaped is a zombie: not running)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # ZombieProcess too
        return False
    except psutil.Error:  # AccessDenied: there, but hidden from us; never taken for a loss
        return True


class RayletWatch:
    """A daemon thread checking every ``period`` seconds that the raylet ``pid`` still runs; the
    first time it does not, ``on_lost(pid)`` is called once from that thread and :attr:`lost` is
    set (the pid), for the waiting thread to stop on."""

    def __init__(self, pid: int, on_lost, period: float = 0.2):
        self.pid, self.lost = pid, None
        self._on_lost, self._period = on_lost, period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ray-raylet-watch", daemon=True)
        self._thread.start()
        # before Ray's own exit handler (they run last registered first), whose shutdown of a Ray
        # instance started here ends the raylet: a process leaving without stop() says nothing false
        atexit.register(self.stop)

    def _run(self) -> None:
        while not self._stop.wait(self._period):
            if not is_running(self.pid):
                self.lost = self.pid
                self._on_lost(self.pid)
                return

    def stop(self) -> None:
        atexit.unregister(self.stop)
        self._stop.set()
        self._thread.join(timeout=2)


class EndNotice:
    """A process beside the driver, for the ends Ray's core gives a driver (exit code 1, no Python
    exception): when the driver ends without :meth:`settle` and its Ray log (in ``logs_dir``) shows
    such an end (:data:`RAY_ENDS`), the process prints one line (to the driver's stderr) naming it,
    followed by the last ``kept`` text :meth:`say` gave it (what the command keeps, how to resume).
    Nothing is printed after an end of another kind (Ctrl-C, an error, kill -9 of the driver)."""

    def __init__(self, logs_dir: str, kept: str):
        self._said = None
        self._proc = subprocess.Popen([sys.executable, "-S", os.path.abspath(__file__), logs_dir, str(os.getpid())],
                                      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                      start_new_session=True)  # Ctrl-C in the terminal is the driver's alone
        self.say(kept)

    def say(self, kept: str) -> None:
        """What the command keeps if Ray ends it now (sent again only when it changed)."""
        if kept != self._said:
            self._said = kept
            self._send(kept.replace("\n", " "))

    def _send(self, line: str) -> None:
        try:
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except (OSError, ValueError):  # it is gone, or closed already
            pass

    def settle(self) -> None:
        """The driver ends by itself (or has said why): nothing for the process to say."""
        self._send(_SETTLED)
        try:
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()


def _ray_end(log: Path) -> str | None:
    """What ended the driver, where the end of its Ray log shows one of :data:`RAY_ENDS`."""
    try:
        with open(log, "rb") as f:
            f.seek(max(f.seek(0, os.SEEK_END) - 65536, 0))
            tail = f.read()
    except OSError:
        return None
    return next((what for line, what in RAY_ENDS if line in tail), None)


def _notice_main(logs_dir: str, driver_pid: int) -> None:
    """The notice process: read what is kept until the driver's end closes the pipe, then say what
    ended it if its own Ray log names one of Ray's ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    kept, settled = "", False
    for line in sys.stdin:
        line = line.rstrip("\n")
        settled = settled or line == _SETTLED
        kept = kept if line == _SETTLED else line
    if settled:
        return
    for log in Path(logs_dir).glob(f"python-core-driver-*_{driver_pid}.log"):
        what = _ray_end(log)
        if what:
            print(f"error: {what}, and Ray ended this run (exit code 1)" + (f"; {kept}" if kept else ""),
                  file=sys.stderr, flush=True)
            return


if __name__ == "__main__":
    _notice_main(sys.argv[1], int(sys.argv[2]))
