"""The HTTP layer: the app factory (:mod:`.app`), the endpoint wrapper, request ids and the
access log (:mod:`.endpoint`), problem+json (:mod:`.problems`), how answers are written and
bodies read (:mod:`.responses`), head limits and connection hygiene (:mod:`.heads`,
:mod:`.connections`), the per-worker resources on ``app.ctx`` (:mod:`.resources`) and the
OpenAPI document (:mod:`.openapi`). Nothing here knows what a run or a decision is.
"""
