"""The field types the request and response bodies share: ids, counts, times, limits,
and the enumerations read from the library and the service's tables at import."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from msgspec import Meta

import decido
from decido import metadata as labels
from decido.goals import Goal, GoalName
from decido.status import RUN_STATES

__all__ = ["DECISION_ID_PATTERN", "MAX_LABEL", "NOT_BLANK", "RUN_ID_PATTERN", "Count",
           "EngineId", "Epoch", "Goal", "GoalIn", "Limit", "Metadata", "MetadataKey", "RunState",
           "Timestamp"]

#: what a run id looks like: ``run_`` and 24 lowercase hex digits (``store.ordered_id``)
RUN_ID_PATTERN = "^run_[0-9a-f]{24}$"
#: what a decision-log id looks like: ``dec_`` and 24 lowercase hex digits
DECISION_ID_PATTERN = "^dec_[0-9a-f]{24}$"
#: the pattern of a text that must hold something besides white space (an expression):
#: JSON Schema's patterns match anywhere in the text, as msgspec's do
NOT_BLANK = r"\S"
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

#: a metadata key (:mod:`decido.metadata`: the rules are the library's, written once)
MetadataKey = Annotated[str, Meta(min_length=1, max_length=labels.MAX_KEY_LENGTH,
                                  pattern=labels.KEY_PATTERN)]
#: labels of a run or a logged decision (:mod:`decido.metadata`)
Metadata = Annotated[
    dict[MetadataKey, Annotated[str, Meta(max_length=labels.MAX_VALUE_LENGTH)]],
    Meta(max_length=labels.MAX_KEYS, description=labels.DESCRIPTION)]
