"""The budget host's progress thread: it drives MPI progress in long busy phases only."""

from __future__ import annotations

import time

from propulate.engine.progress_thread import ProgressThread


class CountingComm:
    """Stands in for the private communicator: counts the probes."""

    def __init__(self) -> None:
        self.probes = 0

    def Iprobe(self, *args: object) -> bool:  # noqa: N802 - the MPI name
        self.probes += 1
        return False


def test_short_busy_phases_get_no_probes() -> None:
    # Zero-cost evaluations: the owner enters MPI between phases of microseconds, so the thread
    # has nothing to do; before, it probed (and took the GIL) every 0.5 ms regardless: about
    # 500 probes in this loop.
    comm = CountingComm()
    thread = ProgressThread(comm, interval=5e-4)  # type: ignore[arg-type]
    try:
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            with thread.busy():
                time.sleep(0)  # lets the thread in while busy, as an evaluation's I/O does
    finally:
        thread.stop()
    assert comm.probes <= 5


def test_a_long_busy_phase_is_probed_every_interval() -> None:
    comm = CountingComm()
    thread = ProgressThread(comm, interval=5e-4)  # type: ignore[arg-type]
    try:
        for _ in range(200):  # fast phases first: the thread has slowed down
            with thread.busy():
                pass
        with thread.busy():
            time.sleep(0.2)
    finally:
        thread.stop()
    # 0.2 s at one probe per 0.5 ms is 400; sleeps overshoot, and the first probe comes within
    # one long tick (8 ms)
    assert comm.probes >= 40


def test_an_idle_thread_sleeps_on_its_event() -> None:
    comm = CountingComm()
    thread = ProgressThread(comm, interval=5e-4, linger=0.01)  # type: ignore[arg-type]
    try:
        with thread.busy():
            time.sleep(0.02)
        time.sleep(0.1)
        probes = comm.probes
        time.sleep(0.1)
        assert comm.probes == probes
        assert not thread._wake.is_set()
    finally:
        thread.stop()


def test_stop_does_not_wait_out_a_tick() -> None:
    # With fast evaluations the thread sleeps long ticks (8 ms) up to the run's end, and the
    # end waited for the tick to pass (every rank, at the budget window's closing barrier):
    # 3-12 ms of a 70 ms run of 2,000 zero-cost evaluations on 2 ranks.
    comm = CountingComm()
    waits = []
    for _ in range(10):
        thread = ProgressThread(comm, interval=5e-4)  # type: ignore[arg-type]
        end = time.monotonic() + 0.04
        while time.monotonic() < end:  # fast busy phases: the ticks grow to the longest
            with thread.busy():
                time.sleep(0)  # lets the thread in, as an evaluation's I/O does
        t = time.perf_counter()
        thread.stop()
        waits.append(time.perf_counter() - t)
    # a tick's sleep was waited out: half of one on average, the median 4 ms
    assert sorted(waits)[5] < 2e-3
