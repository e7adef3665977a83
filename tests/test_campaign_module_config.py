"""A config error in a campaign of ``propulate init`` is one line with "did you mean", also
when the package is installed outside a repository (its workflow a Snakemake module)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a copy of the package, as a wheel lays it out: no repository around
    it, the workflow's files copied into ``propulate/pipeline``."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(
        REPO / "propulate",
        site / "propulate",
        symlinks=False,
        ignore=shutil.ignore_patterns("__pycache__", "*.o", "pdgeqrf_driver"),
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    where = _run([sys.executable, "-c", "import propulate; print(propulate.__file__)"], site, env)
    assert where.stdout.strip() == str(site / "propulate" / "__init__.py"), where
    return env


@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("  seeds: [1]", "  seds: [1]"), "'evolve.seds': unknown key (did you mean 'seeds'?)"),
        (("\nname:", "\nnmae:"), "'nmae': unknown key (did you mean 'name'?)"),
    ],
)
def test_a_config_typo_in_an_inited_campaign_is_one_line(
    installed: dict[str, str], tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    init = _run([sys.executable, "-m", "propulate", "init", "camp"], tmp_path, installed)
    assert init.returncode == 0, init.stderr
    config = tmp_path / "camp" / "config" / "config.yaml"
    text = config.read_text()
    assert edit[0] in text
    config.write_text(text.replace(edit[0], edit[1], 1))
    proc = _run([str(SNAKEMAKE), "-n", "--cores", "1"], tmp_path / "camp", installed)
    assert proc.returncode == 2, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("Using ")]
    assert errors == [f"error: config key {message}"], proc.stderr[-3000:]
    assert "WorkflowError" not in proc.stdout + proc.stderr


CHECK = """\
from propulate.campaign.checks import CampaignError
from propulate.campaign.schema import check_schema
try:
    check_schema({"name": "x", "evolve": {"seds": [1]}})
except CampaignError as err:
    print(err)
"""


@pytest.mark.slow
def test_the_installed_package_checks_configs_against_its_own_schema(
    installed: dict[str, str], tmp_path: Path
) -> None:
    """``check_schema`` without a schema (``python -m propulate.campaign``) finds the one
    shipped in the package (it had looked for a repository around the package)."""
    proc = _run([sys.executable, "-c", CHECK], tmp_path, installed)
    assert proc.stdout.strip() == "config key 'evolve.seds': unknown key (did you mean 'seeds'?)", (
        proc
    )
