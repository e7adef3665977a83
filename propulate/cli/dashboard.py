"""``python -m propulate dashboard [DIR]``: a live view of a running campaign in the browser.

Serves, with Python's own HTTP server, a page that polls ``/api/state`` every few seconds and
shows per run its evaluations against the budget, failures, best loss (and its course over
time), rate, ETA and state (running, stopped, orphaned: the same as ``python -m propulate
status``), and per Snakemake run its jobs done, running, failed and pending. It reads only the
files the runs and Snakemake write (:mod:`propulate.cli.dashboard_state`, with a per-file cache so a poll
reads only what was appended) and never writes into them, so it can run on a login node
reading the cluster's shared file system. It listens on ``127.0.0.1`` unless ``--host`` says
otherwise: the page shows paths and configurations, so do not expose it beyond the machine
without thought (``ssh -L 8080:localhost:8080 login-node`` reaches it from a laptop).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from functools import cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from propulate.cli.dashboard_page import page
from propulate.cli.dashboard_state import Live
from propulate.cli.status import add_directory_argument


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``dashboard`` subcommand."""
    p = sub.add_parser(
        "dashboard",
        help="a live view of the runs and Snakemake jobs in the browser",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_directory_argument(p)
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: any free)")
    p.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: local)"
    )
    p.add_argument(
        "--snakemake-dir",
        type=Path,
        default=None,
        help="Snakemake's .snakemake folder (default: the one beside DIR, if any)",
    )
    p.add_argument(
        "--interval",
        type=float,
        default=3.0,
        help="seconds between two updates of the page (default 3)",
    )
    p.set_defaults(func=run)


def _finite(value: Any) -> Any:
    """JSON without NaN or infinity (which ``JSON.parse`` rejects)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


@cache
def _plotly_js() -> bytes:
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs()).encode()


def make_handler(live: Live, interval: float) -> type[BaseHTTPRequestHandler]:
    """The request handler serving ``live``: ``/``, ``/api/state`` and ``/plotly.js``."""
    html = page(interval).encode()

    class Handler(BaseHTTPRequestHandler):
        server_version = "propulate-dashboard"

        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            route = self.path.split("?", 1)[0]
            if route == "/":
                self._send(html, "text/html; charset=utf-8")
            elif route == "/api/state":
                body = json.dumps(_finite(live.state()), allow_nan=False).encode()
                self._send(body, "application/json", cache=False)
            elif route == "/plotly.js":
                self._send(_plotly_js(), "text/javascript", cache=True)
            else:
                self.send_error(HTTPStatus.NOT_FOUND)

        def _send(self, body: bytes, kind: str, cache: bool = False) -> None:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "max-age=86400" if cache else "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Quiet: one line per poll would fill the terminal."""

    return Handler


def serve(
    root: Path,
    host: str = "127.0.0.1",
    port: int = 8080,
    snakemake_dir: Path | None = None,
    interval: float = 3.0,
) -> ThreadingHTTPServer:
    """The dashboard's server (not yet serving: call ``serve_forever``)."""
    if snakemake_dir is None:
        beside = root.resolve().parent / ".snakemake"
        snakemake_dir = beside if beside.is_dir() else None
    live = Live(root, snakemake_dir)
    server = ThreadingHTTPServer((host, port), make_handler(live, interval))
    server.daemon_threads = True
    return server


def run(args: argparse.Namespace) -> int:
    """Serve the dashboard until interrupted."""
    from propulate.cli import UsageError

    if not args.directory.is_dir():
        raise UsageError(f"{args.directory} is not a directory")
    if args.interval <= 0:
        raise UsageError("--interval must be positive")
    try:
        server = serve(args.directory, args.host, args.port, args.snakemake_dir, args.interval)
    except OSError as err:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {err}") from err
    host, port = server.server_address[:2]
    print(f"dashboard of {args.directory}: http://{host}:{port}/ (Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        print("dashboard stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
