"""What one grading worker may use, the same on every machine so that a greedy submission fails alike
everywhere. The workers and the plugin enforce them; messages quote them."""

DEVICE_MEMORY = 4 * 2**30  # bytes on each accelerator, GPUs and the simulator alike
HOST_MEMORY = 6 * 2**30  # bytes the learner's code may add on the host
OUTPUT_LIMIT = 64 * 2**20  # bytes any one file written by the learner's code may reach (prints included)


def describe_memory() -> str:
    return f"{DEVICE_MEMORY // 2**30} GiB on each accelerator, {HOST_MEMORY // 2**30} GiB on the host"
