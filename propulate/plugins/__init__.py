"""Plug-ins: registries of propagators and pruners with typed options and capabilities.

:mod:`~propulate.plugins.registry` holds the machinery (:class:`~.registry.Registry`,
:class:`~.registry.Entry`, :class:`~.registry.Spec`), :mod:`~propulate.plugins.facts` what a
run knows before it starts (:class:`~.facts.RunFacts`) and :mod:`~propulate.plugins.resolve`
turns a run's settings into checked specs once. The registries themselves live with what they
register: :data:`propulate.propagators.registry.PROPAGATORS` and
:data:`propulate.pruners.registry.PRUNERS`.
"""
