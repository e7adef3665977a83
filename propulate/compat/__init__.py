"""Propulate 1.2's front ends, kept so that its scripts run unchanged.

:class:`~propulate.compat.propulator.Propulator`, :class:`~propulate.compat.islands.Islands`,
:class:`~propulate.compat.migrator.Migrator`, :class:`~propulate.compat.pollinator.Pollinator`,
:class:`~propulate.compat.surrogate.Surrogate`, the history reader
(:mod:`propulate.compat.history`), 1.2's checkpoints (:mod:`propulate.compat.legacy_checkpoint`)
and ``propulate.utils`` (:mod:`propulate.compat.utils`): thin layers over the engine
(:mod:`propulate.engine`). ``from propulate import Islands, Propulator, ...`` imports them as
before, and so do their 1.2 paths (``propulate.islands``, ``propulate.utils.benchmark_functions``
...) through the alias table (:mod:`propulate._aliases`).
"""
