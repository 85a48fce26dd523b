"""`devcourse watch`: re-check the current exercise each time its file is saved, as rustlings' watch mode.

Keys (no Enter needed in a terminal): h the next hint, r re-check now, n the next exercise (once this one
passes), s skip this one, l the list, q quit. A check runs in a thread of its own, so keys work while it runs:
q quits at once, and the grading processes stop the abandoned check when its connection closes. The file is watched with watchfiles (the whole exercises/
folder, so a deleted file that comes back is seen too); with --manual, or where watching files does not work
(some network or container file systems), nothing is watched and r re-checks. Without a terminal (stdin piped)
keys are read a line at a time.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
from pathlib import Path

from rich.console import Console
from rich.text import Text

from grader.learner import milestones, report, targets, workspace
from grader.catalog import course
from grader.learner.progress import Progress

KEYS = "h hint · r re-check · n next · s skip · l list · q quit"
KEYS_PLAIN = "h hint, r re-check, n next, s skip, l list, q quit"


def _read_keys(events: queue.Queue) -> None:
    """Put each key pressed on the queue; q at end of input."""
    fd = sys.stdin.fileno() if sys.stdin else -1
    tty = fd >= 0 and os.isatty(fd)
    try:
        while True:
            data = os.read(fd, 1) if tty else (sys.stdin.readline() or "").encode()
            if not data:
                break
            for ch in data.decode(errors="ignore"):
                if not ch.isspace():
                    events.put(("key", ch.lower()))
    except (OSError, ValueError):
        pass
    events.put(("key", "q"))


def _watch_files(folder: Path, events: queue.Queue, stop: threading.Event, watching: threading.Event) -> None:
    try:
        import watchfiles

        # An empty set every 100 ms of quiet: the first one says the watch is in place (set `watching`).
        for changes in watchfiles.watch(folder, stop_event=stop, debounce=300, step=50, raise_interrupt=False,
                                        rust_timeout=100, yield_on_timeout=True):
            watching.set()
            for _, path in changes:
                events.put(("changed", str(Path(path).resolve())))
    except Exception as exc:  # noqa: BLE001 - fall back to manual mode, saying why
        events.put(("watch-failed", f"{type(exc).__name__}: {exc}"))
    finally:
        watching.set()  # failed or stopped: nothing to wait for


@contextlib.contextmanager
def _cbreak():
    """Keys arrive one by one, unechoed, while watching (a terminal only)."""
    try:
        import termios
        import tty

        fd = sys.stdin.fileno()
        old = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError, AttributeError):
        yield
        return
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


class Watcher:
    def __init__(self, ex: course.Exercise, console: Console, manual: bool, device: str | None,
                 timeout: float | None):
        self.ex, self.console, self.manual, self.device, self.timeout = ex, console, manual, device, timeout
        self.prog = Progress.load()
        self.passed = False
        self.greeting: str | None = None  # the welcome, shown on the first screen (grader.learner.milestones)
        self.generation = 0  # of the latest check started: results of older ones are dropped
        self.pending = False  # the latest check is still running
        self.events: queue.Queue = queue.Queue()
        self.watching = threading.Event()

    def say(self, text, style: str = "") -> None:
        self.console.print(text if isinstance(text, Text) else Text(text, style=style))

    def footer(self) -> None:
        keys = KEYS if report.fancy(self.console) else KEYS_PLAIN
        if not self.manual:
            self.watching.wait(10)  # a save before the watch is in place would go unseen: say so only then
        mode = "press r to re-check" if self.manual else "watching your file: save it to re-check"
        self.say(f"[{mode}] {keys}", "dim")

    def check(self) -> None:
        """Start checking the exercise in a thread of its own: keys keep working meanwhile (q quits at once).
        The result comes back as a "graded" event; a newer check makes an older one's result stale."""
        file = workspace.exercise_file(self.ex)
        if self.console.is_terminal:
            self.console.clear()
        self.prog = Progress.load()  # other commands and notebooks may have recorded checks meanwhile
        done, total, earned, points = self.prog.totals()
        self.say(Text.assemble(report.progress_bar(self.console, done, total, width=20),
                               f" {done}/{total} done, {earned}/{points} points   ",
                               (f"{self.ex.number}. {self.ex.name}", "bold"), f": {self.ex.title}"))
        self.generation += 1
        self.passed = False
        if not file.is_file():
            self.say(targets.missing_file_message(self.ex, file), "red")
            self.footer()
            return
        if self.greeting:  # on the first screen, after the clear, so that the learner sees it
            self.say(self.greeting)
            self.greeting = None
        self.say(f"Checking {workspace.shown(file)} ... (q quits at once)", "dim")
        generation, ex = self.generation, self.ex
        self.pending = True

        def work():
            try:
                outcome = targets.grade(ex, file, self.device, self.timeout)
            except targets.UsageError as exc:
                outcome = exc
            self.events.put(("graded", (generation, file, outcome)))

        threading.Thread(target=work, daemon=True).start()

    def graded(self, generation: int, file: Path, outcome) -> None:
        if generation != self.generation:
            return  # a check started since (a save, another exercise) supersedes this one
        self.pending = False
        if isinstance(outcome, Exception):
            self.say(str(outcome), "red")
            self.footer()
            return
        g = outcome
        if self.device is None:  # progress comes from full checks only (grader.learner.progress)
            self.prog.record_check(self.ex, g.passed)
        self.passed = g.passed
        report.print_grade(self.console, g, workspace.shown(file), hint_command="press h for a hint")
        if self.device is not None:
            self.say(f"Not recorded in your progress: a check limited to --device {self.device} is not a full "
                     "check.", "dim")
        if g.passed:
            if self.device is None:
                for text in milestones.after_pass(self.prog, self.ex):
                    self.say("\n" + text, "green")
            self.say("Press n for the next exercise (or keep editing: r re-checks).", "bold green")
        self.footer()

    def hint(self) -> None:
        self.prog = Progress.load()
        n = min(self.prog.hints_seen(self.ex.name) + 1, len(self.ex.hints))
        self.prog.saw_hint(self.ex, n)
        self.say(report.hint_text(self.ex, n, more="press h again"))

    def move_on(self, skip: bool = False) -> bool:
        """To the next exercise; False when there is none. Skipping a done exercise just moves on: a skip
        never takes a pass away."""
        self.prog = Progress.load()
        if skip:
            self.prog.skip(self.ex)
        nxt = self.prog.next_exercise()
        if nxt is None:
            self.say("Every exercise is done or skipped. Well done!", "bold green")
            return False
        self.prog.start(nxt)
        self.ex = nxt
        self.check()
        return True

    def run(self) -> int:
        stop = threading.Event()
        threading.Thread(target=_read_keys, args=(self.events,), daemon=True).start()
        if not self.manual:
            threading.Thread(target=_watch_files, daemon=True,
                             args=(workspace.root() / "exercises", self.events, stop, self.watching)).start()
        try:
            with _cbreak() if sys.stdin and sys.stdin.isatty() else contextlib.nullcontext():
                self.check()
                while True:
                    kind, value = self.events.get()
                    if kind == "graded":
                        self.graded(*value)
                    elif kind == "changed":
                        if value != str(workspace.exercise_file(self.ex).resolve()):
                            continue
                        self._drain_changes()
                        self.check()
                    elif kind == "watch-failed":
                        self.manual = True
                        self.say(f"Watching files does not work here ({value}): press r to re-check.", "yellow")
                    elif value == "q":
                        break
                    elif value == "r":
                        self.check()
                    elif value == "h":
                        self.hint()
                    elif value == "l":
                        self.prog = Progress.load()
                        report.print_list(self.console, self.prog, self.prog.next_exercise())
                        self.footer()
                    elif value == "n":
                        if self.pending:
                            self.say("The check is still running: wait for its result.", "yellow")
                        elif not self.passed:
                            self.say(f"{self.ex.name} does not pass yet: fix it first, or press s to skip it.",
                                     "yellow")
                        elif not self.move_on():
                            break
                    elif value == "s":
                        if not self.move_on(skip=True):
                            break
                    else:
                        self.footer()
        except KeyboardInterrupt:
            pass
        finally:
            stop.set()
        self.say("Bye: devcourse watch picks up where you left off.")
        return 0

    def _drain_changes(self) -> None:
        """Several saves in a row make one check; keys stay queued."""
        kept = []
        with contextlib.suppress(queue.Empty):
            while True:
                event = self.events.get_nowait()
                if event[0] != "changed":  # keys, and the result of a running check, stay
                    kept.append(event)
        for event in kept:
            self.events.put(event)


def run(name: str | None, manual: bool = False, device: str | None = None, timeout: float | None = None,
        console: Console | None = None) -> int:
    prog = Progress.load()
    ex = targets.exercise(name, prog)
    prog.start(ex)
    greeting = milestones.welcome(prog)
    watcher = Watcher(ex, console or Console(highlight=False), manual, device, timeout)
    watcher.greeting = greeting
    return watcher.run()
