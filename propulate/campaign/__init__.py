"""Campaigns: a config checked and resolved into tasks, spaces, settings, options and paths.

- :mod:`propulate.campaign.config`: :class:`Campaign` (``Campaign.from_config``) and
  :class:`CampaignError`;
- :mod:`propulate.campaign.options`: the command-line options of the campaign's jobs;
- :mod:`propulate.campaign.files`: the campaign, space and task files (one writer and reader each);
- :mod:`propulate.campaign.resume`: resuming an evolve run after a failed or killed job.
"""

from propulate.campaign.config import Campaign, CampaignError
from propulate.campaign.files import (
    campaign_spec,
    read_campaign_file,
    suite_spec,
    write_campaign_file,
    write_task_file,
)
from propulate.campaign.paths import RESULTS

__all__ = [
    "RESULTS",
    "Campaign",
    "CampaignError",
    "campaign_spec",
    "read_campaign_file",
    "suite_spec",
    "write_campaign_file",
    "write_task_file",
]
