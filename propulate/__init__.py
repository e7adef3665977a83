"""propulate: asynchronous evolutionary optimization over MPI and multitask transfer tuning."""

from propulate.history import read_history
from propulate.space import Categorical, Float, Integer, SearchSpace

__version__ = "2.0.0.dev0"

__all__ = ["Categorical", "Float", "Integer", "SearchSpace", "read_history", "__version__"]
