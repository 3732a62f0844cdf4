"""The field types the request and response bodies share: ids, counts, times, limits,
and the enumerations read from the library and the service's tables at import."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from msgspec import Meta

import decido
from decido.goals import Goal, GoalName
from decido_service.store import RUN_STATES

__all__ = ["DECISION_ID_PATTERN", "MAX_LABEL", "RUN_ID_PATTERN", "Count", "EngineId", "Epoch",
           "Goal", "GoalIn", "Limit", "RunState", "Timestamp"]

#: what a run id looks like: ``run_`` and 24 lowercase hex digits (``store.ordered_id``)
RUN_ID_PATTERN = "^run_[0-9a-f]{24}$"
#: what a decision-log id looks like: ``dec_`` and 24 lowercase hex digits
DECISION_ID_PATTERN = "^dec_[0-9a-f]{24}$"
#: the longest key label (characters)
MAX_LABEL = 200

if TYPE_CHECKING:
    EngineId = str
    RunState = str
else:
    EngineId = Literal[tuple(e["id"] for e in decido.engines())]
    RunState = Literal[RUN_STATES]

#: a goal in a request: the long form or its alias (decido.goals); answers say ``Goal``
GoalIn = Annotated[GoalName, Meta(
    description="minimize or maximize ('min' and 'max' are aliases; answers say the long "
                "form)")]
Count = Annotated[int, Meta(ge=0)]
Epoch = Annotated[int, Meta(description="Unix epoch seconds")]
Timestamp = Annotated[str, Meta(extra_json_schema={"format": "date-time"})]
#: a limit or cap; null: unlimited
Limit = Annotated[int | None, Meta(description="null: unlimited")]
