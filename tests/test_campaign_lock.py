"""One Snakemake run per campaign: a second run of a campaign whose first still runs (after a
``snakemake --unlock``) stops before any job instead of overwriting the first's logs and
report; a finished run gives the campaign back."""

from __future__ import annotations

from pathlib import Path

import pytest

from propulate.campaign.lock import LEASE_NAME, CampaignBusy, hold, let_go
from propulate.runs.lease import Lease, current
from tests.workflow_utils import SNAKEMAKE, TINY, copy_workflow, snakemake, write_config


def test_a_held_campaign_is_refused_with_its_owner(tmp_path: Path) -> None:
    first = Lease(tmp_path, name=LEASE_NAME)
    first.acquire(wait=False)
    try:
        with pytest.raises(CampaignBusy, match=r"being run by another snakemake .*--unlock"):
            hold(tmp_path)
    finally:
        first.release()
    hold(tmp_path)  # released: free
    assert current(tmp_path, LEASE_NAME).looks_alive()
    let_go()
    assert current(tmp_path, LEASE_NAME).released


@pytest.mark.slow
@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")
def test_a_second_run_stops_before_any_job(tmp_path: Path) -> None:
    copy_workflow(tmp_path)
    name = write_config(tmp_path, TINY)
    root = tmp_path / "results" / "tiny"
    running = Lease(root, name=LEASE_NAME)  # the first run, still going
    running.acquire(wait=False)
    target = "results/tiny/tasks/train00.json"
    try:
        busy = snakemake(tmp_path, target, "--cores", "1", "--configfile", name)
        assert busy.returncode != 0
        assert "is being run by another snakemake" in busy.stdout
        assert not (root / "tasks").exists() and not (root / "logs").exists()
    finally:
        running.release()
    done = snakemake(tmp_path, target, "--cores", "1", "--configfile", name)
    assert done.returncode == 0, done.stdout
    assert (root / "tasks" / "train00.json").is_file()
    assert current(root, LEASE_NAME).released  # given back at the end


@pytest.mark.slow
@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")
def test_a_campaign_of_propulate_init_is_held_too(tmp_path: Path) -> None:
    from propulate.cli import main

    assert main(["init", str(tmp_path), "--name", "starter"]) == 0
    root = tmp_path / "results" / "starter"
    running = Lease(root, name=LEASE_NAME)
    running.acquire(wait=False)
    try:
        busy = snakemake(tmp_path, "results/starter/campaign.yaml", "--cores", "1")
    finally:
        running.release()
    assert busy.returncode != 0 and "is being run by another snakemake" in busy.stdout
    assert not (root / "campaign.yaml").exists()
