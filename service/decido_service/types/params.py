"""Path, query and header parameters, as msgspec Structs: the one source of their parsing
(:func:`decido_service.http.params.parse`) and of the OpenAPI ``parameters``.

``location`` says where a Struct's fields are read from (``path``, ``query``, ``header``:
its base, :class:`PathParams`, :class:`QueryParams` or :class:`HeaderParams`); a field's
encoded name is the parameter's name, its ``Meta`` description the parameter's.
Lists are pages in the Stripe manner: newest first, ``limit`` items (1 to :data:`MAX_PAGE`,
default :data:`DEFAULT_PAGE`), the cursor ``starting_after=<id>``, ``{"data": [...],
"has_more": bool}``. Any well-formed id is a cursor (:data:`CURSOR`): one of the key's
items, or a position by the creation time its id begins with (an item deleted while the
client was paging, say), so a page never fails for the cursor's sake.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from msgspec import Meta, Struct

from decido_service.types.fields import (
    DECISION_ID_PATTERN,
    RUN_ID_PATTERN,
    EngineId,
    MetadataKey,
    RunState,
)

__all__ = ["CURSOR", "DEFAULT_PAGE", "LAST_EVENT_ID_PATTERN", "MAX_IDEMPOTENCY_KEY", "MAX_PAGE",
           "DecisionPage", "DecisionPath", "EventsHeaders", "HeaderParams", "IdempotencyHeaders",
           "MetadataFilter", "Page", "Params", "PathParams", "QueryParams", "REPLAYED", "RunPage",
           "RunPath", "FrontQuery", "MAX_FRONT_PAGE", "TraceQuery"]

DEFAULT_PAGE, MAX_PAGE = 20, 100
#: the most points a page of a run's front holds (and its default)
MAX_FRONT_PAGE = 10_000
#: the longest Idempotency-Key accepted
MAX_IDEMPOTENCY_KEY = 255
#: the header (value ``true``) of the answer replayed for a repeated Idempotency-Key
REPLAYED = "Idempotent-Replayed"
#: the event ids of a run's stream (:mod:`decido_service.runs.events`); empty: none seen
LAST_EVENT_ID_PATTERN = r"^([1-4]|2\.[0-9]{1,19})?$"


class Params(Struct):
    """Parameters read from one place of a request: ``location`` (path, query, header);
    ``deep``: the query parameters that are objects, sent ``name[member]=value`` (OpenAPI's
    ``deepObject`` style)."""

    location: ClassVar[str]
    deep: ClassVar[frozenset[str]] = frozenset()


#: a list's metadata filter: ``metadata[project]=bridge-A`` (several: all of them)
MetadataFilter = Annotated[dict[MetadataKey, str], Meta(
    description="only those with these labels: metadata[key]=value, several ANDed")]


class PathParams(Params):
    """Parameters of the path."""

    location: ClassVar[str] = "path"


class QueryParams(Params, kw_only=True):
    """Parameters of the query string."""

    location: ClassVar[str] = "query"


class HeaderParams(Params, kw_only=True):
    """Parameters of the head."""

    location: ClassVar[str] = "header"


class RunPath(PathParams):
    """The run of a ``/v1/runs/{run_id}`` path."""

    run_id: Annotated[str, Meta(
        pattern=RUN_ID_PATTERN,
        description="a run id (another key's, unknown or malformed: 404)")]


class DecisionPath(PathParams):
    """The entry of a ``/v1/decisions/{decision_id}`` path."""

    decision_id: Annotated[str, Meta(
        description="a decision-log id (another key's or unknown: 404)")]


class Page(QueryParams, kw_only=True):
    """A page's size."""

    limit: Annotated[int, Meta(ge=1, le=MAX_PAGE,
                               description=f"page size (default {DEFAULT_PAGE})")
                     ] = DEFAULT_PAGE


#: what a cursor's description says
CURSOR = ("the last id of the previous page; an id that is not (or no longer) one of the "
          "key's is the position its creation time gives (ids begin with it)")


class DecisionPage(Page, kw_only=True):
    """A page of the decision log."""

    deep: ClassVar[frozenset[str]] = frozenset({"metadata"})
    starting_after: Annotated[str, Meta(pattern=DECISION_ID_PATTERN, description=CURSOR)
                              ] | None = None
    metadata: MetadataFilter | None = None


class RunPage(Page, kw_only=True):
    """A page of a key's runs and its filters."""

    deep: ClassVar[frozenset[str]] = frozenset({"metadata"})

    starting_after: Annotated[str, Meta(pattern=RUN_ID_PATTERN, description=CURSOR)
                              ] | None = None
    state: Annotated[RunState, Meta(description="only runs in this state")] | None = None
    engine: Annotated[EngineId, Meta(description="only runs of this engine")] | None = None
    metadata: MetadataFilter | None = None


class FrontQuery(QueryParams, kw_only=True):
    """A page of a run's front: its points by index, in the front's order."""

    limit: Annotated[int, Meta(
        ge=1, le=MAX_FRONT_PAGE,
        description=f"the most points of the page (default {MAX_FRONT_PAGE}); a page also "
                    "stops at about the tier's front_page_bytes")] = MAX_FRONT_PAGE
    starting_after: Annotated[int, Meta(
        ge=0, le=2**53, description="the index of the last point of the previous page "
                                    "(absent: from the first point)")] | None = None


class TraceQuery(QueryParams, kw_only=True):
    """The form of a run's trace."""

    format: Annotated[Literal["json", "csv"], Meta(
        description="json (default) or csv (text/csv: evaluations,elapsed_ms,best lines)")
    ] = "json"


class IdempotencyHeaders(HeaderParams, kw_only=True, rename={"key": "Idempotency-Key"}):
    """``Idempotency-Key`` of a submission (:mod:`decido_service.runs.idempotency`)."""

    key: Annotated[str, Meta(
        min_length=1, max_length=MAX_IDEMPOTENCY_KEY,
        description=f"1 to {MAX_IDEMPOTENCY_KEY} characters of the client's choice: the same "
                    "key and request within 24 h gets the first answer again (with "
                    f"{REPLAYED}: true) and is not counted twice; with another request: "
                    "422; while the first is being answered: 409; longer: 400")] | None = None


class EventsHeaders(HeaderParams, kw_only=True, rename={"last_event_id": "Last-Event-ID"}):
    """Where a run's event stream resumes."""

    last_event_id: Annotated[str, Meta(
        pattern=LAST_EVENT_ID_PATTERN,
        description="resume after this event id (the last one seen; empty: from the "
                    "start); an id this stream never sent: 400")] | None = None
