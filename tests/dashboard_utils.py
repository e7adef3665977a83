"""Run directories that grow, and a dashboard server in a thread, for the dashboard's tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path

from propulate.cli.dashboard import make_handler
from propulate.cli.dashboard_state import Live
from propulate.compat.history import EvaluationLog
from propulate.runs.metadata import RunMetadata, write_run_metadata

META = {"task": "t", "run": "seed0", "method": "propulate"}


def start_run(
    out: Path, budget: int | None = 10, time_limit: float | None = None, start: float = 1000.0
) -> None:
    """An empty run directory with its ``run.json`` (budget, time limit, start time)."""
    out.mkdir(parents=True, exist_ok=True)
    write_run_metadata(
        out,
        RunMetadata(
            objective="m:f",
            space={"parameters": {}},
            method="propulate",
            run="seed0",
            seed=0,
            max_evaluations=budget,
            time_limit=time_limit,
            started=start,
        ),
    )


def append(out: Path, losses: list[float | None], first: int = 0, session: str = "s1") -> None:
    """Append one record per loss (None: failed) to rank 0's log, as a running run does."""
    with EvaluationLog(out, 0, session, META) as log:
        for i, loss in enumerate(losses, start=first):
            log.append(
                {"x": i},
                loss,
                island=0,
                generation=i,
                start=1000.0 + i,
                seconds=1.0,
                error=None if loss is not None else "RuntimeError: x",
            )


@contextmanager
def serving(live: Live, interval: float = 1.0) -> Iterator[str]:
    """The dashboard of ``live`` on a free local port, in a thread; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(live, interval))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
