"""What one grading worker may use, the same on every machine so that a greedy submission fails alike
everywhere. The workers and the plugin enforce them; messages quote them."""

DEVICE_MEMORY = 4 * 2**30  # bytes on each accelerator, GPUs and the simulator alike
HOST_MEMORY = 6 * 2**30  # bytes the learner's code may add on the host
OUTPUT_LIMIT = 64 * 2**20  # bytes any one file written by the learner's code may reach (prints included)


def describe_memory() -> str:
    return f"{DEVICE_MEMORY // 2**30} GiB on each accelerator, {HOST_MEMORY // 2**30} GiB on the host"


# Time: a check's `timeout` (course.toml) counts the CPU time the grading process spends, which does not grow
# when the machine is busy with other work (a learner's laptop, a class graded in parallel): a right fix is not
# refused for the machine's load. A wait that burns no CPU (a deadlock, an endless Event.wait()) is ended by
# the clock, after a longer limit that no right fix comes near even on a loaded machine.
def wall_limit(timeout: float) -> float:
    """Seconds on the clock a check may take, for a CPU-time limit of `timeout` seconds."""
    return 3 * timeout + 30


#: What a check's record carries of the learner's own output (prints), at most: its end.
OUTPUT_SENT = 8000


def output_tail(text: str) -> str:
    """The end of what the learner's code printed during a check, for its result record."""
    if len(text) <= OUTPUT_SENT:
        return text
    return f"[... {len(text) - OUTPUT_SENT} earlier characters not shown]\n" + text[-OUTPUT_SENT:]


def explain(message: str) -> str:
    """A failure message, with the limit it ran into said in words (Python's own words name none)."""
    if "[Errno 27]" in message or "File too large" in message:
        return (f"{message}\nThat is the output limit of grading: what your code prints or writes may reach "
                f"{OUTPUT_LIMIT // 2**20} MiB per file. Print a little (a shape, a device, a few values), not "
                "whole tensors or every step.")
    if "MemoryError" in message and "memory limit" not in message:
        return (f"{message}\nThat is the memory limit of grading ({describe_memory()}): your code asked for "
                "more than a check may use. Is a tensor far bigger than the exercise needs?")
    return message
