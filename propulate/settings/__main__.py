"""``python -m propulate.settings``: the stage settings' table (:mod:`propulate.settings.docs`)."""

from propulate.settings.docs import main

raise SystemExit(main())
