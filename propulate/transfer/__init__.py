"""Transfer learning's predictions that need numpy only: TLA1's predicted optimum of a new task.

* :mod:`propulate.transfer.optimum` -- :func:`~propulate.transfer.optimum.basin_line`, the
  optimum predicted along the line through two training tasks' optima of one basin;
* :mod:`propulate.transfer.joint_posterior` -- the joint model's posterior at a new task and
  TLA1's prediction from it.

Kept out of :mod:`propulate.models` on purpose: ``suggest`` (:mod:`propulate.tuningdb`) makes
the same predictions from a stored model without importing the model-guided loop, MPI, scipy's
optimizers or GPy. Nothing here imports more than numpy.
"""
