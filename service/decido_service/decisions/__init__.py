"""Decisions: one counted and logged call of the decision surface (:mod:`.decide`) and the
decision log, its entries and pages (:mod:`.log`). The blueprints and the dashboard both
call these functions.
"""
