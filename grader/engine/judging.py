"""What the process that forked a grading process can vouch for: its records and the end of its output, read
until it ends (stopped when a check overruns or it never starts), what it left running (stopped too), and the
results judged from them."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import sys
import time

from grader.engine import limits

GRACE_SECONDS = 5.0  # after a check's own limit on the clock (limits.wall_limit), before the worker is killed
OUTPUT_TAIL = 4000  # characters of a worker's own output kept, to explain a grader that could not run
START_LIMIT = 120.0  # seconds for a worker to import the grader and collect its checks


class Collector:
    """Reads a grading process's records and stops what it left running; a subreaper, so that orphans of the
    learner's code come back to it. A zygote is one; a batch worker judges its answer processes with one."""

    def __init__(self, keep: set[int]):
        self.known_children = keep  # our own children that are not workers (the other family's zygote)
        self.spare = None  # a zygote's spare worker (spawn mode), not a leftover
        self.client: int | None = None  # in a handler: its client's connection; a hang-up stops the check
        if sys.platform.startswith("linux"):
            _become_subreaper()  # orphans of the learner's code come back to us, so they can be stopped

    def _collect(self, pid: int, rfd: int, ofd: int, timeout: float, on_record=None):
        """Read the worker's records (and the end of its output) until it ends; stop it when a check overruns
        or it never starts. `on_record`: called on each chunk of records (a batch worker's sign of life)."""
        sel = selectors.DefaultSelector()
        for fd in (rfd, ofd):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        if self.client is not None:  # readable only once the client hangs up (it sends nothing after its job)
            sel.register(self.client, selectors.EVENT_READ)
        buf, output, status, stopped = b"", b"", None, None
        last, started = time.monotonic(), False
        while status is None:
            for key, _ in sel.select(timeout=0.02):
                with contextlib.suppress(BlockingIOError):
                    chunk = os.read(key.fd, 1 << 16)
                    if key.fd == self.client:
                        if not chunk:  # nobody waits for this check any more (watch's q, Ctrl-C): stop it
                            sel.unregister(self.client)
                            stopped = "the check was stopped: nobody waits for its result"
                    elif key.fd == ofd:
                        output = (output + chunk)[-OUTPUT_TAIL:]
                    elif chunk:
                        buf += chunk
                        last = time.monotonic()
                        if on_record is not None:
                            on_record()
                        started = started or b'"collected"' in buf
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                break
            limit = timeout + GRACE_SECONDS if started else START_LIMIT
            if time.monotonic() - last > limit or stopped:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                stopped = stopped or (f"the grader stopped your code after {limit:g} s without an answer (it "
                                      "ignored the time limit of its check)")
        with contextlib.suppress(BlockingIOError, OSError):
            while chunk := os.read(rfd, 1 << 16):
                buf += chunk
        with contextlib.suppress(BlockingIOError, OSError):
            while chunk := os.read(ofd, 1 << 16):
                output = (output + chunk)[-OUTPUT_TAIL:]
        sel.close()
        return buf.decode(errors="replace").splitlines(), output.decode(errors="replace"), status, stopped

    def _stop_leftovers(self, pid: int) -> int:
        """Stop whatever the worker's code left running: every process below this one (a subreaper, so the orphans
        of the worker's code come back here) but the next spare and the other family's zygote; how many there were.
        In a PID namespace the keeper killed them all already."""
        from grader.guard import containment

        mine = {self.spare.pid} if self.spare else set()
        return containment.sweep(spare=frozenset(mine | self.known_children), worker_group=pid)


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    except OSError:
        return None


def _become_subreaper() -> None:
    import ctypes  # the zygote's own code; learner code never runs in this process

    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


OUTCOMES = ("passed", "failed", "skipped")


def judge(lines, token, exit_code, status, stopped, leftovers, tail, job) -> dict:
    """The results of one job, from what the zygote itself can vouch for."""
    collected, results, seen, forged, end, error, stopped_why = None, [], set(), 0, None, None, None
    isolation = None
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            forged += 1
            continue
        if not isinstance(rec, dict) or rec.pop("token", None) != token:
            forged += 1
        elif collected is None:
            if isinstance(rec.get("collected"), list):
                collected = {tuple(c) for c in rec["collected"]}
            elif "isolation" in rec and isolation is None:  # sent by the worker before any learner code ran
                isolation = {"isolated": rec.get("isolated") is True, "how": str(rec["isolation"])}
            elif "error" in rec:  # pytest could not start, or the grader could not be collected: says why
                error = error or str(rec["error"])
            elif "end" in rec:  # pytest ended before listing the checks: its own output (the tail) says why
                pass
            else:
                forged += 1
        elif "end" in rec:
            end = rec["end"]
        elif "error" in rec:
            error = rec["error"]
        elif "stopped" in rec:
            stopped_why = str(rec["stopped"])
        else:
            key = (rec.get("check"), rec.get("leg"))
            if key not in collected or key in seen or rec.get("outcome") not in OUTCOMES:
                forged += 1
            else:
                seen.add(key)
                results.append({k: rec.get(k) for k in ("check", "leg", "outcome", "message", "seconds", "trace", "output")})
    spec = job["spec"]
    problems = []
    code = os.waitstatus_to_exitcode(status) if status is not None else None
    if forged:
        problems.append(f"the grading channel received {forged} record(s) the grader did not send: a submission "
                        "that writes its own results is not graded")
    if stopped:
        problems.append(stopped)
    elif collected is None:
        why = error or _last_lines(tail) or "it ended before listing its checks"
        problems.append(f"the grader could not run: {why}")
    elif stopped_why:
        pass  # said by the check that found it; the checks after it are failed below
    elif code is not None and code < 0:
        problems.append(f"the process running your code was killed by signal {-code} (a crash in native code, or "
                        "too much memory?)")
    elif end is None or code != exit_code:
        problems.append(f"your code ended the grading process after {len(seen)} of {len(collected)} checks "
                        "(does it call exit()?)")
    # Every listed check reports once, or it is a failure: whatever ended the run early (an exception that
    # stops pytest, a crash, a check that found planted code) passes nothing it did not run. Where the process
    # itself failed, the message that says what ended it (the last so far) names them; else each is a failed
    # check of its own.
    unreported = [key for key in sorted(collected or ()) if key not in seen]
    if unreported and problems:
        problems[-1] += f" ({len(unreported)} of {len(collected)} checks never reported a result)"
    elif unreported:
        why = ("the grading stopped at an earlier check, which says why" if stopped_why
               else "the grading run ended early (something your code did stopped pytest)")
        results += [{"check": check, "leg": leg, "outcome": "failed", "seconds": 0, "trace": [],
                     "message": f"this check never reported a result: {why}."} for check, leg in unreported]
    if leftovers:
        problems.append(f"your code left {leftovers} process(es) running after its checks; they were stopped. "
                        "Wait for (join) every process you start.")
    results += [{"check": "(grader process)", "leg": spec, "outcome": "failed", "message": p, "seconds": 0}
                for p in problems]
    return {"results": results, "isolation": isolation}


def _last_lines(text: str, n: int = 5) -> str:
    return "\n".join(text.strip().splitlines()[-n:])
