"""Run by tests/test_warm_kernels.py in a process of its own (the provisioner choice and the forkserver are
process-wide): start kernels the way nbgrader's executor does, with grader.classroom.warm_kernels selected, and
print what the kernels saw as JSON."""

import json
import os
import sys
import time


def run_code(kc, code: str) -> tuple[str, dict]:
    out = []
    reply = kc.execute_interactive(code, timeout=60, output_hook=lambda m: out.append(m["content"].get("text", "")))
    return "".join(out), reply["content"]


def main() -> None:
    from jupyter_client.manager import start_new_kernel

    from grader.classroom import warm_kernels

    folder = sys.argv[1]
    found = {"selected": warm_kernels.use_in_this_process(), "me": os.getpid()}
    km, kc = start_new_kernel(kernel_name="python3", cwd=folder, env={**os.environ, "PROBE": "seen"})
    found["provisioner"] = type(km.provisioner).__name__
    found["kernel_pid"] = km.provisioner.pid
    text, _ = run_code(kc, "import os, sys, json; print(json.dumps([os.getcwd(), os.environ.get('PROBE'), os.getppid(), "
                           "os.getpgid(0) == os.getpid(), os.path.basename(sys.argv[0])]))")
    found["cwd"], found["env"], found["kernel_parent"], found["own_group"], found["argv0"] = json.loads(text)
    kc.execute("import time; time.sleep(60)")  # then interrupted, as a stuck cell is by nbclient
    time.sleep(1)
    start = time.monotonic()
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=30)["content"]
    found["interrupted"] = [reply.get("ename"), round(time.monotonic() - start, 1)]
    km.shutdown_kernel(now=False)
    found["alive_after_shutdown"] = km.is_alive()
    km2, _ = start_new_kernel(kernel_name="python3")
    pid2 = km2.provisioner.pid
    km2.shutdown_kernel(now=True)  # killed, as a kernel that does not answer is
    time.sleep(0.5)
    found["killed_gone"] = not os.path.exists(f"/proc/{pid2}") or open(f"/proc/{pid2}/stat").read().split()[2] == "Z"
    km3, _ = start_new_kernel(kernel_name="python3")  # its template dies (a worker killed mid-class)...
    pid3 = km3.provisioner.pid
    os.kill(found["kernel_parent"], 9)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists(f"/proc/{pid3}"):
        time.sleep(0.2)
    found["orphan_gone"] = not os.path.exists(f"/proc/{pid3}")  # ...and the kernel ends too
    print(json.dumps(found))


if __name__ == "__main__":  # the forkserver imports this file as __mp_main__: nothing may run then
    main()
