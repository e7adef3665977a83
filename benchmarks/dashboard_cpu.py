"""The dashboard's cost: CPU time of its server while a page polls it, and its answer times.

Starts ``python -m propulate dashboard DIR --port 0`` and fetches ``/api/state`` every
``--interval`` seconds for ``--seconds`` (as the page does), optionally while ``--command``
runs (a campaign: ``snakemake --cores 2 ...``; the poll stops when it ends). Prints the
server's CPU seconds (user + system, from ``/proc/PID/stat``), its share of one core, the
answers' median and maximum time and size, and the command's wall time.

``--synthetic N`` first writes a run of N records under DIR (like benchmarks/report_size.py),
to time the first answer (every log read) against the following ones (only what was appended).

Usage::

    nice -n 10 python benchmarks/dashboard_cpu.py results --seconds 600 \\
        --command "snakemake --cores 2 --configfile config/config.yaml"
    python benchmarks/dashboard_cpu.py /tmp/dash --synthetic 100000 --seconds 20
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    """Serve, poll, measure; print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--command", help="run this meanwhile (poll until it ends)")
    parser.add_argument("--synthetic", type=int, default=0, help="write a run of N records")
    args = parser.parse_args(argv)
    if args.synthetic:
        sys.path.insert(0, str(Path(__file__).parent))
        from report_size import synthetic_run

        synthetic_run(args.directory / "synthetic", args.synthetic)
    server = subprocess.Popen(
        [sys.executable, "-m", "propulate", "dashboard", str(args.directory), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().split()[-4] + "api/state"
    base_cpu = cpu_seconds(server.pid)  # imports and start-up
    job = subprocess.Popen(shlex.split(args.command)) if args.command else None
    start = time.monotonic()
    answers: list[tuple[float, int]] = []
    try:
        while time.monotonic() - start < args.seconds:
            t = time.perf_counter()
            body = urllib.request.urlopen(url, timeout=60).read()
            answers.append((time.perf_counter() - t, len(body)))
            if job is not None and job.poll() is not None:
                break
            time.sleep(max(args.interval - (time.perf_counter() - t), 0.0))
        elapsed = time.monotonic() - start
        used = cpu_seconds(server.pid) - base_cpu
    finally:
        server.terminate()
        server.wait()
    job_seconds = None
    if job is not None:
        job.wait()
        job_seconds = round(time.monotonic() - start, 1)
    times = [a for a, _ in answers]
    row = {
        "directory": str(args.directory),
        "polls": len(answers),
        "seconds": round(elapsed, 1),
        "server_cpu_s": round(used, 2),
        "cpu_share_of_one_core_pct": round(100 * used / elapsed, 2),
        "first_answer_s": round(times[0], 3),
        "answer_s_median": round(statistics.median(times[1:] or times), 4),
        "answer_s_max_after_first": round(max(times[1:] or times), 3),
        "answer_kb_median": round(statistics.median(b for _, b in answers) / 1e3, 1),
        "command": args.command,
        "command_wall_s": job_seconds,
        "command_exit": None if job is None else job.returncode,
    }
    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
