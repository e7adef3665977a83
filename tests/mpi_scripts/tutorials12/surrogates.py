"""Propulate 1.2's two surrogate tutorials as a user writes them: subclasses of
``propulate.Surrogate`` (``from propulate import Surrogate``) with 1.2's five methods.

``LogSurrogate`` prints every call and keeps the best final loss it has seen; ``MockSurrogate``
does nothing and never cancels (to measure a surrogate's overhead)."""

from propulate import Surrogate
from propulate.population import Individual


class LogSurrogate(Surrogate):
    """Print each call; track the best final loss and the number of values of the run."""

    def __init__(self) -> None:
        super().__init__()
        self.synthetic_id = 0
        self.best_loss = 10000.0
        print("LogSurrogate initialized")

    def start_run(self, ind: Individual) -> None:
        self.synthetic_id = 0
        print(f"LogSurrogate - start_run: keys {list(ind.keys())} values {list(ind.values())}")

    def update(self, loss: float) -> None:
        self.best_loss = min(self.best_loss, loss)
        print(f"LogSurrogate - update {self.synthetic_id}: {loss} (best {self.best_loss})")

    def cancel(self, loss: float) -> bool:
        print(f"LogSurrogate - cancel {self.synthetic_id}: {loss}")
        self.synthetic_id += 1
        return False

    def merge(self, data: float) -> None:
        print(f"LogSurrogate - merge {data} (best {self.best_loss})")
        self.best_loss = min(self.best_loss, data)

    def data(self) -> float:
        print(f"LogSurrogate - data: {self.best_loss}")
        return float(self.best_loss)


class MockSurrogate(Surrogate):
    """A surrogate that does nothing and never cancels."""

    def __init__(self) -> None:
        super().__init__()

    def start_run(self, ind: Individual) -> None:
        pass

    def update(self, loss: float) -> None:
        pass

    def cancel(self, loss: float) -> bool:
        return False

    def merge(self, data: float) -> None:
        pass

    def data(self) -> float:
        return 0.0
