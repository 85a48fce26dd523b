"""Notebook kernels forked from a warm template, for `devcourse classroom autograde`.

Autograding a notebook starts a fresh IPython kernel, and most of a kernel's start is Python importing
ipykernel, IPython and zmq: about 0.4 of the 0.6 s of CPU a kernel costs before its first cell, paid once
per submission. On a machine whose cores are all grading, that is a fifth of the class's time
(benchmarks/results/classroom_autograde.md: 1.95 s of CPU per submission with stock kernels, 1.57 s).

`WarmKernelProvisioner` is a jupyter_client kernel provisioner (registered under the entry point
`devcourse-warm-kernel`) that starts the standard IPython kernel as a child of the standard library's
forkserver, which has those modules imported already. Everything else is jupyter_client's own
LocalProvisioner: the same command line, connection file, environment and working folder, the same
kernel code; shutdown, interrupts and kills reach the kernel's process as they would reach a Popen's.
A kernel command other than this Python's `-m ipykernel_launcher` is started the usual way.

`devcourse classroom autograde` selects it in its worker processes only (JUPYTER_DEFAULT_PROVISIONER_NAME);
stock `nbgrader autograde` and every other Jupyter program keep their provisioner. Linux only: elsewhere
kernels start as usual.
"""

from __future__ import annotations

import os
import signal
import sys

from jupyter_client.provisioning import LocalProvisioner

NAME = "devcourse-warm-kernel"
#: What every kernel of a classroom notebook imports before its first cell (the answer magic's module too).
PRELOAD = ("ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "grader.classroom.kernel")


def available() -> bool:
    """Kernels can be forked here, and the provisioner is installed (the package's entry point)."""
    import multiprocessing
    from importlib.metadata import entry_points

    return (sys.platform.startswith("linux") and "forkserver" in multiprocessing.get_all_start_methods()
            and bool(entry_points(group="jupyter_client.kernel_provisioners", name=NAME)))


def use_in_this_process() -> bool:
    """Make the kernels this process starts warm ones, where available; whether they will be. Call before the
    first kernel (jupyter_client reads the variable once). Never raises: kernels then start as usual."""
    try:
        if not available():
            return False
        _context()  # the forkserver starts now, not when the first notebook waits for its kernel
    except Exception:  # noqa: BLE001 - e.g. a forkserver inherited from a parent process, unusable here
        return False
    os.environ["JUPYTER_DEFAULT_PROVISIONER_NAME"] = NAME
    return True


_CONTEXT = None


def _context():
    global _CONTEXT
    if _CONTEXT is None:
        import multiprocessing
        from multiprocessing import forkserver

        forkserver.set_forkserver_preload(list(PRELOAD))
        forkserver.ensure_running()
        _CONTEXT = multiprocessing.get_context("forkserver")
    return _CONTEXT


def _is_ipykernel(cmd: list[str]) -> bool:
    return len(cmd) >= 3 and cmd[0] == sys.executable and cmd[1:3] == ["-m", "ipykernel_launcher"]


def _kernel_main(argv: list[str], env: dict, cwd: str | None) -> None:
    """What `python -m ipykernel_launcher ARGV` does, in a fork of the warm template."""
    os.setsid()  # its own group, as a kernel started by jupyter_client is
    if cwd:
        os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    # Its parent is the forkserver: the kernel ends if that goes (ipykernel's parent poller), as a Popen'd
    # kernel ends with the process that started it. (ipykernel reads JPY_PARENT_PID when it is imported,
    # which was in the template: hence the option.)
    os.environ["JPY_PARENT_PID"] = str(os.getppid())
    argv = [*argv, f"--IPKernelApp.parent_handle={os.getppid()}"]
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import atexit
    import importlib.util

    from ipykernel import kernelapp

    sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *argv]  # as `python -m` sets it
    try:
        kernelapp.launch_new_instance(argv=argv)
    finally:
        atexit._run_exitfuncs()  # a multiprocessing child skips them; a kernel's (IPython's history) expect to run


class _ForkedKernel:
    """The subset of subprocess.Popen that LocalProvisioner uses, over a multiprocessing.Process."""

    stdin = stdout = stderr = None

    def __init__(self, process):
        self._process = process
        self.pid = process.pid

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int | None:
        self._process.join(timeout)
        return self._process.exitcode

    def send_signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class WarmKernelProvisioner(LocalProvisioner):
    async def launch_kernel(self, cmd: list[str], **kwargs):
        if not _is_ipykernel(cmd):
            return await super().launch_kernel(cmd, **kwargs)
        env = kwargs.get("env")
        try:
            process = _context().Process(target=_kernel_main, name="kernel",
                                         args=(cmd[3:], dict(os.environ if env is None else env), kwargs.get("cwd")))
            process.start()
        except Exception:  # noqa: BLE001 - no forkserver here (a daemonic process, say): start it the usual way
            return await super().launch_kernel(cmd, **kwargs)
        self.process = _ForkedKernel(process)
        self.pid = process.pid
        # Not its group: the kernel makes its own group a moment later (os.setsid), and until then the group
        # it starts in is the forkserver's. Signals go to the kernel's process, as Popen.send_signal does.
        self.pgid = None
        self.cwd = kwargs.get("cwd") or os.getcwd()
        return self.connection_info
