"""``python -m propulate plugins [NAME]``: the registered propagators and pruners, their
options (default, range, meaning) and capabilities.

A spec chooses one: ``NAME[:KEY=VALUE,...]`` on the command line (``--propagator
ga:pop_size=12``), ``{type: NAME, KEY: VALUE}`` in a campaign config.
"""

from __future__ import annotations

import argparse
from typing import Any


def cmd_plugins(args: argparse.Namespace) -> int:
    """Print every registered plug-in, or the one named, with its options and capabilities."""
    from propulate.cli import UsageError
    from propulate.plugins.docs import capabilities_text, option_text, registries
    from propulate.settings.spec import describe

    found = False
    for key, registry in registries().items():
        names = [n for n in registry if args.name in (None, n)]
        if not names:
            continue
        found = True
        print(f"{registry.kind}s (--{key} NAME[:KEY=VALUE,...]):")
        for name in names:
            entry = registry[name]
            print(f"  {name}: {entry.help}")
            for item in entry.option_settings():
                print(f"      {option_text(item).replace('`', '')}")
            can = capabilities_text(entry)
            if can:
                print(f"      can: {can}")
        common = [option_text(s).replace("`", "") for s in describe(registry.common)]
        if common and args.name is None:
            print(f"  every {registry.kind} also takes: {'; '.join(common)}")
    if not found:
        known = ", ".join(n for r in registries().values() for n in r)
        raise UsageError(f"no propagator or pruner named {args.name!r}; known: {known}")
    return 0


def register(subparsers: Any) -> None:
    """Add ``plugins`` to the command line."""
    p = subparsers.add_parser(
        "plugins",
        help="list the propagators and pruners, their options and capabilities",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="only this propagator or pruner")
    p.set_defaults(func=cmd_plugins)
