"""Early stopping of evaluations from their intermediate values (pruners).

:class:`~propulate.pruners.base.Pruner` is the interface: intermediate values of a running
evaluation in, continue or stop out, learning from the finished evaluations of every rank.
"""

from propulate.pruners.base import Pruner

__all__ = ["Pruner"]
