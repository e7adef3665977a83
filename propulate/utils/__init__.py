"""Utilities: benchmark-function search spaces (Propulate 1.2 compatible) and helpers.

Submodules
----------
benchmark_functions
    ``get_function_search_space(name)`` and the fourteen benchmark losses under Propulate 1.2's
    names (thin layer over :mod:`propulate.objectives.benchmark`).
"""

# --- Re-exports of the engine's helpers go here (added by the engine's owner): ---------------
# from propulate.utils.<module> import get_default_propagator, set_logger_config
# __all__ = ["get_default_propagator", "set_logger_config"]
