"""``space``: check a search-space file and convert it to and from ConfigSpace JSON.

    propulate space space.yaml                                  # check it, list its parameters
    propulate space space.yaml --to-configspace cs.json         # write ConfigSpace JSON
    propulate space cs.json --from-configspace --out space.yaml  # read ConfigSpace JSON

ConfigSpace is the optional extra ``configspace``; what converts and what is refused:
docs/search-spaces.md.
"""

from __future__ import annotations

import argparse
from typing import Any


def cmd_space(args: argparse.Namespace) -> int:
    """Run ``space``."""
    from propulate.space import SearchSpace

    if args.from_configspace:
        from propulate.space.configspace import read_configspace_json

        space = read_configspace_json(args.file)
    else:
        space = SearchSpace.from_yaml(args.file)
    if args.to_configspace:
        from propulate.space.configspace import write_configspace_json

        write_configspace_json(space, args.to_configspace)
        print(f"propulate space: wrote {args.to_configspace}")
    if args.out:
        import yaml

        with open(args.out, "w") as fh:
            yaml.safe_dump(space.to_dict(), fh, sort_keys=False, default_flow_style=None)
        print(f"propulate space: wrote {args.out}")
    if not (args.to_configspace or args.out):
        for name, dim in space.dimensions.items():
            cond = space.conditions.get(name)
            when = f"  when {cond.to_spec()}" if cond else ""
            print(f"{name}: {dim.to_dict()}{when}")
        for clause in space.forbidden:
            print(f"forbidden: {clause.expression}")
    return 0


def register(subparsers: Any) -> None:
    """Add ``space`` to the command line."""
    p = subparsers.add_parser(
        "space",
        help="check a space file; convert it to and from ConfigSpace JSON",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="a space file (YAML), or ConfigSpace JSON")
    p.add_argument("--from-configspace", action="store_true", help="FILE is ConfigSpace JSON")
    p.add_argument("--to-configspace", metavar="JSON", help="write the space as ConfigSpace JSON")
    p.add_argument("--out", metavar="YAML", help="write the space as a propulate space file")
    p.set_defaults(func=cmd_space)
