"""Paired re-measurement: the default and each method's best configuration measured again.

* :mod:`propulate.remeasure.paired` -- the rounds of interleaved measurements and the speedups
  (``default / tuned``, median over the rounds) they give;
* :mod:`propulate.remeasure.verdict` -- which configuration those speedups say wins, and the
  verdict in words.
"""
