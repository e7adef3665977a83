"""The asynchronous island-model engine (imports nothing heavy: no MPI until a worker starts).

Public here: :class:`RunResult`, what :meth:`propulate.Islands.result` returns.
"""

from propulate.engine.result import RunResult

__all__ = ["RunResult"]
