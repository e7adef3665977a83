"""The settings of every stage, each default, help and range in one place.

One dataclass per stage (:mod:`~propulate.settings.stages`: evolve, re-validation, a command
objective, sensitivity; :mod:`~propulate.settings.models`: LCM, MLA, transfer), each field described once
(:mod:`~propulate.settings.spec`). The command line, the campaign's job options, the config
schema and its documentation are derived from these descriptions; tests check each of them in
both directions.
"""

from __future__ import annotations

from dataclasses import asdict

from propulate.settings.models import LCMSettings, MLASettings, TransferSettings
from propulate.settings.spec import (
    Setting,
    defaults,
    describe,
    described,
    from_mapping,
    json_schema,
    setting,
)
from propulate.settings.stages import (
    CommandSettings,
    EvolveSettings,
    RevalidateSettings,
    SensitivitySettings,
)

#: The config sections of a campaign and their settings classes.
SECTIONS: dict[str, type] = {
    "evolve": EvolveSettings,
    "lcm": LCMSettings,
    "mla": MLASettings,
    "transfer": TransferSettings,
    "revalidate": RevalidateSettings,
}

__all__ = [
    "SECTIONS",
    "CommandSettings",
    "EvolveSettings",
    "LCMSettings",
    "MLASettings",
    "RevalidateSettings",
    "SensitivitySettings",
    "Setting",
    "TransferSettings",
    "asdict",
    "defaults",
    "describe",
    "described",
    "from_mapping",
    "json_schema",
    "setting",
]
