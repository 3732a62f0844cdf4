"""Decisions: one counted and logged call of the decision surface (:mod:`.decide`) and the
decision log, its entries and pages (:mod:`.log`). The blueprints and the dashboard both
call these functions.

A body these modules read is decoded JSON (or a form's fields made into one), whose objects
are dicts: that is what they test for (``isinstance(x, dict)``; a test against the
``Mapping`` ABC runs its ``__instancecheck__`` in Python, ~1,800 instructions more, and a
decision request made six).
"""
