"""Which parameters matter: Sobol indices of the fitted models, importance from run records.

* :mod:`~propulate.sensitivity.sobol` -- Sobol indices of a function over a search space
  (SALib's Saltelli sample and estimators; integer and categorical values snapped);
* :mod:`~propulate.sensitivity.model` -- the indices of an LCM's posterior mean per task, tasks
  the model was not trained on included;
* :mod:`~propulate.sensitivity.records` -- importance from a run's records without a model
  (Optuna's fANOVA, PED-ANOVA or mean decrease in impurity);
* :mod:`~propulate.sensitivity.tables` -- their plain-text tables.

The command is ``python -m propulate sensitivity``; the report's section is
:mod:`propulate.report.sensitivity`. SALib, scikit-learn and Optuna come with the
``sensitivity`` extra and are imported only when used.
"""
