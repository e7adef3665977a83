"""``propulate init`` and the packaged workflow in the development (editable) install.

The packaged workflow (``propulate/pipeline``) links to the repository's top-level files, and
``pyproject.toml``'s package data must list every file of them that git tracks: a file missing
there would be missing from the wheel (tests/test_packaging.py installs one for real).
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

import propulate
from propulate.campaign import Campaign
from propulate.cli import main
from propulate.pipeline import ROOT, profile, scaffold, snakefile

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"

#: The top-level files and folders the package ships (propulate/pipeline links to each).
SHIPPED = (
    "Snakefile",
    "workflow",
    "config",
    "profiles",
    "apps/pdgeqrf",
    "examples/command",
    "examples/digits_optimizers",
    "benchmarks/results/mla_demo_sets_4_8.json",  # the demo's report shows these two
    "benchmarks/results/mla_demo_set_10.json",
)


def _package_data() -> list[str]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    return data["tool"]["setuptools"]["package-data"]["propulate.pipeline"]


def _tracked(path: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "--", path], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    return out.split()


def test_the_packaged_workflow_is_the_top_level_one() -> None:
    assert os.path.samefile(snakefile(), REPO / "Snakefile")
    for rel in SHIPPED:
        assert os.path.samefile(ROOT / rel, REPO / rel), rel
    assert os.path.samefile(profile("slurm"), REPO / "profiles" / "slurm")
    with pytest.raises(FileNotFoundError, match="no Snakemake profile 'nope'"):
        profile("nope")


def test_package_data_lists_every_tracked_workflow_file() -> None:
    if not (REPO / ".git").exists():
        pytest.fail("not a git checkout: cannot list the tracked files")
    # what setuptools takes: each pattern globbed in the package folder, through its links
    matched = {p: set(glob.glob(p, root_dir=ROOT)) for p in _package_data()}
    shipped = set().union(*matched.values())
    tracked = [f for rel in SHIPPED for f in _tracked(rel) if not Path(f).name.startswith(".")]
    assert "workflow/rules/common.smk" in tracked, tracked
    unlisted = sorted(set(tracked) - shipped)
    assert not unlisted, (
        f"add these to [tool.setuptools.package-data] in pyproject.toml: {unlisted}"
    )
    dead = [p for p, files in matched.items() if not files]
    assert not dead, f"package-data patterns that match no file: {dead}"


def test_version_has_one_source() -> None:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in data["project"]
    assert data["project"]["dynamic"] == ["version"]
    assert data["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "propulate.__version__"}
    from importlib.metadata import version

    assert version("propulate") == propulate.__version__


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"propulate {propulate.__version__}"


def test_changelog_citation_and_license_name_this_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text()
    first = next(line for line in changelog.splitlines() if line.startswith("## "))
    assert first.startswith(f"## {propulate.__version__}"), first
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["version"] == propulate.__version__
    assert citation["license"] == "BSD-3-Clause"
    titles = {ref["title"] for ref in citation["references"]}
    assert titles == {
        "Massively Parallel Genetic Optimization through Asynchronous Propagation of Populations",
        "Multitask and Transfer Learning for Autotuning Exascale Applications",
    }
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert data["project"]["license"] == "BSD-3-Clause"
    assert (REPO / "LICENSE").read_text().startswith("BSD 3-Clause License")


def test_init_writes_a_starter_campaign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = tmp_path / "my-tuning"
    assert main(["init", str(directory)]) == 0
    expected = {
        "Snakefile",
        ".gitignore",
        "config/config.yaml",
        "config/README.md",
        "space.yaml",
        "objective.py",
        "profiles/slurm/config.yaml",
        "profiles/slurm/README.md",
        "profiles/default/config.yaml",
    }
    written = {str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()}
    assert written == expected
    text = (directory / "Snakefile").read_text()
    assert "module propulate:" in text and "use rule * from propulate" in text
    assert (directory / "profiles/slurm/config.yaml").read_text() == (
        REPO / "profiles/slurm/config.yaml"
    ).read_text()
    config_text = (directory / "config/config.yaml").read_text()
    assert config_text.count("\n#") >= 10, "the config explains itself in comments"
    config = yaml.safe_load(config_text)
    assert config["name"] == "my_tuning" and config["parameters"] == "space.yaml"
    # the campaign resolves in its directory: the objective imports, the space file is read
    monkeypatch.chdir(directory)
    monkeypatch.syspath_prepend(str(directory))
    campaign = Campaign.from_config(config)
    assert list(campaign.parameters or {}) == ["block", "alpha"]
    assert campaign.path("report.html") == "results/my_tuning/report.html"


@pytest.mark.parametrize("example", sorted(scaffold.EXAMPLES))
def test_init_example(example: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = tmp_path / "c"
    assert main(["init", str(directory), "--example", example]) == 0
    setup = "python -m propulate.campaign setup config/config.yaml"
    # the examples that build a program say so first, in the config and after writing it
    builds = example in {"command", "command_two_objectives", "pdgeqrf"}
    assert scaffold.has_setup(example) == builds
    assert (setup in capsys.readouterr().out) == builds
    assert (setup in (directory / "config/config.yaml").read_text()) == builds
    spec = scaffold.EXAMPLES[example]
    for rel in spec.files:
        assert (directory / rel).read_bytes() == (REPO / rel).read_bytes(), rel
        assert os.access(directory / rel, os.X_OK) == os.access(REPO / rel, os.X_OK), rel
    shipped = (REPO / spec.config).read_text()
    config_text = (directory / "config/config.yaml").read_text()
    assert config_text.endswith(shipped)
    assert yaml.safe_load(config_text) == yaml.safe_load(shipped)
    assert f"propulate init --example {example}" in config_text


def test_init_example_demo_resolves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's config, with the benchmark tables it shows, is a valid campaign there."""
    main(["init", str(tmp_path), "--example", "demo"])
    monkeypatch.chdir(tmp_path)
    campaign = Campaign.from_config(yaml.safe_load(Path("config/config.yaml").read_text()))
    assert campaign.name == "demo" and len(campaign.report_benchmarks) == 2


@pytest.mark.parametrize(
    ("example", "parameter", "propagator"),
    [("digits_optimizers", "momentum", "auto"), ("digits_paper", "ema_momentum", "tpe")],
)
def test_init_conditional_examples_resolve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example: str, parameter: str, propagator: str
) -> None:
    """The conditional-space examples' configs and space files are valid campaigns there."""
    main(["init", str(tmp_path), "--example", example])
    monkeypatch.chdir(tmp_path)
    campaign = Campaign.from_config(yaml.safe_load(Path("config/config.yaml").read_text()))
    assert campaign.name == example and campaign.evolve.propagator == propagator
    assert parameter in (campaign.parameters or {})


def test_init_never_overwrites_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "Snakefile").write_text("# mine\n")
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("propulate init: error:") and "already holds Snakefile" in err
    assert "\n" not in err and "--force" in err
    assert (tmp_path / "Snakefile").read_text() == "# mine\n"
    assert not (tmp_path / "config").exists(), "nothing is written when one file is in the way"
    assert main(["init", str(tmp_path), "--force"]) == 0
    assert "module propulate:" in (tmp_path / "Snakefile").read_text()
    (tmp_path / "file").write_text("x")
    assert main(["init", str(tmp_path / "file")]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_init_bad_example_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "x", "--example", "nope"]) == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")
def test_inited_snakefile_is_lint_clean(tmp_path: Path) -> None:
    """snakefmt and ``snakemake --lint`` accept the Snakefile; a dry run plans the campaign."""
    main(["init", str(tmp_path), "--name", "starter"])
    fmt = subprocess.run(
        [str(SNAKEMAKE.parent / "snakefmt"), "--check", "Snakefile"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PMI_"))}
    env["PATH"] = os.pathsep.join([str(SNAKEMAKE.parent), env.get("PATH", "")])
    dry = subprocess.run(
        [str(SNAKEMAKE), "-n", "--quiet", "rules"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert dry.returncode == 0, dry.stdout + dry.stderr
    for rule in ("evolve", "fit_lcm", "transfer", "report", "tuningdb_update"):
        assert rule in dry.stdout, dry.stdout
