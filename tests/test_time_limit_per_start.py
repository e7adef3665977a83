"""``time_limit`` is per start of a run, and says so: a resumed run has the whole limit again
(``max_evaluations`` counts the evaluations of earlier starts)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from propulate.compat.history import read_history
from propulate.settings import EvolveSettings
from propulate.settings.spec import describe


def test_the_setting_says_it_is_per_start(capsys: pytest.CaptureFixture[str]) -> None:
    from propulate.cli import main

    with pytest.raises(SystemExit):
        main(["evolve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "limit in seconds of each start" in text
    assert "a resumed run has the whole limit again" in text
    help_of = {item.name: item.help for item in describe(EvolveSettings)}
    assert "resumed ones included" in help_of["max_evaluations"]


@pytest.mark.slow
def test_a_resumed_run_has_the_whole_limit_again(tmp_path: Path) -> None:
    (tmp_path / "objs.py").write_text(
        "import time\n\n\ndef slow(params):\n    time.sleep(0.05)\n    return params['x']\n"
    )
    (tmp_path / "space.yaml").write_text("parameters:\n  x: [0.0, 1.0]\n")
    args = [sys.executable, "-m", "propulate", "evolve", "--objective", "objs:slow"]
    args += ["--space", "space.yaml", "--out", "run", "--time-limit", "1.5"]
    counts = []
    for _ in range(2):
        proc = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "finished (time limit)" in proc.stdout
        counts.append(len(read_history(tmp_path / "run")))
    assert counts[0] >= 5 and counts[1] >= 2 * counts[0] - counts[0] // 2  # a second 1.5 s
