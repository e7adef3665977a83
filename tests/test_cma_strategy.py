"""CMA-ES's strategy parameters (:class:`propulate.propagators.cma_core.Strategy`): the
learning rates and step-size constants of the reference IPOP-CMA-ES, the ``cma`` package's."""

from __future__ import annotations

import numpy as np
import pytest

from propulate.propagators.cma_core import Strategy

# The `cma` package's (4.x) values, active CMA, no mirrored sampling: (n, lambda) ->
# (cs, damps, c1, cmu, cc). lambda = 160 is IPOP's fifth restart in 10-D.
PACKAGE = {
    (10, 10): (0.319614, 1.31961, 0.0152838, 0.0235518, 0.29499),
    (10, 40): (0.5, 2.6196, 0.0143885, 0.124241, 0.31552),
    (10, 160): (0.5, 5.75021, 0.0117596, 0.436275, 0.366529),
}


@pytest.mark.parametrize(("n", "lam"), sorted(PACKAGE))
def test_the_rates_are_the_cma_packages(n: int, lam: int) -> None:
    """The rank-mu rate was the tutorial's, 15 % below the package's at lambda = 10 (one
    worker needed ~6 % more evaluations on the ellipsoids), and with IPOP's large populations
    cs neared 0.8 and damps 3.7 where the package keeps 0.5 and 5.75."""
    s = Strategy.make(n, lam, active=True)
    got = (s.cs, s.damps, s.c1, s.cmu, s.cc)
    for name, a, b in zip(("cs", "damps", "c1", "cmu", "cc"), got, PACKAGE[n, lam], strict=True):
        assert a == pytest.approx(b, rel=1e-5), name


def test_the_active_weights_sum_as_the_packages() -> None:
    """Positive weights sum to 1, negative ones to ``-(1 + c1 / cmu)`` (the bound that binds
    in 10-D): with the package's cmu the sum is -1.649, not -1.758."""
    s = Strategy.make(10, 10, active=True)
    assert s.weights[: s.mu].sum() == pytest.approx(1.0)
    assert s.weights[s.mu :].sum() == pytest.approx(-(1 + s.c1 / s.cmu))
    assert s.weights[s.mu :].sum() == pytest.approx(-1.6489, abs=1e-3)
    assert not Strategy.make(10, 10, active=False).weights[s.mu :].any()


@pytest.mark.parametrize("n", [2, 5, 10, 20, 40])
@pytest.mark.parametrize("lam", [6, 10, 20, 40, 160, 640])
def test_the_rates_match_the_installed_cma_package(n: int, lam: int) -> None:
    cma = pytest.importorskip("cma")
    es = cma.CMAEvolutionStrategy(n * [0.0], 1.0, {"verbose": -9, "popsize": lam})
    s = Strategy.make(n, lam, active=True)
    assert s.cs == pytest.approx(es.adapt_sigma.cs, rel=1e-9)
    assert s.damps == pytest.approx(es.adapt_sigma.damps, rel=1e-9)
    assert s.c1 == pytest.approx(es.sp.c1, rel=1e-9)
    assert s.cmu == pytest.approx(es.sp.cmu, rel=1e-9)
    assert s.cc == pytest.approx(es.sp.cc, rel=1e-9)
    assert s.weights == pytest.approx(np.asarray(es.sp.weights), rel=1e-6, abs=1e-12)
