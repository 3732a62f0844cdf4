"""Decisions, the library's package: choose among a finite set of options under constraints.

The public functions are :mod:`decido.decide`'s (``decido.decide``, ``decido.decide_batch``,
``decido.decision_methods``, ``decido.decision_schemas``).  Inside:

* ``types``: the request and result types (TypedDicts of the JSON members, with their
  limits and descriptions); ``schema`` derives the JSON Schema from them.
* ``vocabulary``: the method table (one row per method: its scoring function, defaults,
  limits and value checks) and the parameters, weightings and limits.
* ``request``, ``options``, ``extras``, ``ahp``, ``uncertain``, ``faults``: the validation
  (every fault found, raised together as one ``DecisionError``).
* ``pipeline``: the path of one request; ``methods`` and ``_kernels`` (C) score,
  ``answer``, ``sensitivity``, ``smaa`` and ``expressions`` build the answer.
"""
