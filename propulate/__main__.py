"""``python -m propulate``: the command line (see :mod:`propulate.cli`)."""

from propulate.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
