"""A producer process and a consumer process that share device tensors through a torch.multiprocessing queue,
played in one process.

A grading process may start no process (grader/guard/sandbox.py). A check runs the learner's producer itself, handing
it the two objects a producer gets from torch.multiprocessing, a queue and an Event the consumer sets when done,
and plays the consumer (the grader's code) in between: the consumer reads as soon as the producer waits for it
(`Event.wait`, or `Event.is_set` once every item is in the queue), as a consumer would while the producer waits.
When the producer's function returns, its process has ended. A device tensor shared through a queue stays the
producer's memory (CUDA IPC): the consumer may use it only while the producer lives, and a consumer that finds
the producer gone is what CUDA reports as "Producer process has been terminated before all shared CUDA tensors
released" (then reads freed memory). `Handoff` records which came first.
"""

from __future__ import annotations

from typing import Callable

TERMINATED = ("Producer process has been terminated before all shared CUDA tensors released. See Note [Sharing CUDA "
              "tensors]")


class Deadlock(Exception):
    """The producer waits for the consumer, which waits for items the producer has not sent."""


class Handoff:
    """`expected` items go from the producer to `consume(items)`, the grader's consumer."""

    def __init__(self, expected: int, consume: Callable[[list], None]):
        self.expected, self.consume = expected, consume
        self.items: list = []
        self.producer_alive = True
        self.consumed_while_alive: bool | None = None  # None: the consumer has not read yet
        self.queue, self.done = Queue(self), Event(self)

    def _consume_if_ready(self) -> bool:
        if self.consumed_while_alive is None and len(self.items) >= self.expected:
            self.consumed_while_alive = self.producer_alive
            self.consume(list(self.items))
            self.done.flag = True
        return self.done.flag

    def producer_exits(self) -> None:
        """The producer's function returned: its process ends, then the consumer reads what it can."""
        self.producer_alive = False
        self._consume_if_ready()


class Queue:
    """What a producer calls on a torch.multiprocessing Queue."""

    def __init__(self, handoff: Handoff):
        self._handoff = handoff

    def put(self, obj, block: bool = True, timeout: float | None = None) -> None:
        self._handoff.items.append(obj)

    def put_nowait(self, obj) -> None:
        self.put(obj)

    def close(self) -> None:
        pass

    def join_thread(self) -> None:
        pass


class Event:
    """What a producer calls on a multiprocessing Event that the consumer sets."""

    def __init__(self, handoff: Handoff):
        self._handoff, self.flag = handoff, False

    def set(self) -> None:
        self.flag = True

    def clear(self) -> None:
        self.flag = False

    def is_set(self) -> bool:
        return self._handoff._consume_if_ready()

    def wait(self, timeout: float | None = None) -> bool:
        if not self._handoff._consume_if_ready():
            if timeout is not None:
                return False
            raise Deadlock(f"the producer waits for the consumer, which waits for {self._handoff.expected} items; "
                           f"{len(self._handoff.items)} were put in the queue")
        return True
