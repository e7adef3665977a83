"""Named contract checks for the code that plugs into propulate, like scikit-learn's
``check_estimator``: one function per contract, each failing with its own name.

* :mod:`propulate.contracts.propagator`: :func:`check_propagator` and its checks
  (:func:`propagator_checks`);
* :mod:`propulate.contracts.pruner`: :func:`check_pruner` and its checks
  (:func:`pruner_checks`).

Both ``check_*`` functions take ``expected_failures`` (check name to reason) to skip checks
known to fail. ``docs/contracts.md`` lists every check and what it asserts.
"""

from __future__ import annotations

from propulate.contracts.propagator import check_propagator, propagator_checks
from propulate.contracts.pruner import check_pruner, pruner_checks

__all__ = ["check_propagator", "check_pruner", "propagator_checks", "pruner_checks"]
