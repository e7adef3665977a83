"""One Snakemake run per campaign at a time: a lease on the campaign's results folder.

Snakemake locks its working directory, but ``snakemake --unlock`` removes that lock whether
or not the run that took it still runs; a second run started then writes the same files as the
first: its jobs truncate the first's evolve logs and both write ``report.html`` at once. The
workflow's ``onstart`` handler therefore takes a lease on ``results/<name>/``
(:class:`propulate.runs.lease.Lease`, folder ``campaign.lease``; a heartbeat thread renews it,
and a dead run's lease is taken over at once on the same host, after its expiry elsewhere) and
refuses to start while another run holds it; ``onsuccess`` and ``onerror`` give it back.
Dry runs and the jobs themselves run no handlers, so they never take it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from propulate.campaign.paths import RESULTS
from propulate.runs.lease import Lease, LeaseHeld

#: The lease folder inside the campaign's results folder.
LEASE_NAME = "campaign.lease"

_held: list[Lease] = []


class CampaignBusy(RuntimeError):
    """Another Snakemake run holds the campaign."""


def campaign_root(config: Mapping[str, Any]) -> Path:
    """The campaign's results folder, ``results/<name>``, from its config."""
    return Path(RESULTS, str(config["name"]))


def hold(root: str | Path) -> None:
    """Take the campaign's lease for this process (``onstart``).

    Raises
    ------
    CampaignBusy
        When another live run holds it, naming its host, process and start.
    """
    lease = Lease(root, name=LEASE_NAME)
    try:
        lease.acquire(wait=False)
    except LeaseHeld as err:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(err.owner.started))
        raise CampaignBusy(
            f"campaign {root} is being run by another snakemake ({err.owner.host}, process "
            f"{err.owner.pid}, since {since}): two runs of one campaign overwrite each other's "
            "logs and report. Wait for it or stop it; `snakemake --unlock` removes Snakemake's "
            "own lock only, not that run"
        ) from None
    _held.append(lease)


def let_go() -> None:
    """Give back the leases this process holds (``onsuccess``, ``onerror``)."""
    while _held:
        _held.pop().release()
