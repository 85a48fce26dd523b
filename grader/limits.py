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
