"""Filters and paging of the List* calls (ListNamespaces, ListServices, ListOperations, ListInstances), as the API
reference defines them: EQ takes one value, IN several, BEGINS_WITH one, BETWEEN two; at most MaxResults (1..100,
default 100) items per page and an opaque NextToken for the rest."""
from __future__ import annotations

import base64
from typing import Any, Callable, Iterable, TypeVar

from .errors import invalid_input

T = TypeVar("T")
Field = Callable[[Any], Any]

MAX_PAGE = 100


def _matches(value: Any, condition: str, values: list[str]) -> bool:
    if isinstance(value, tuple):
        # An item known by several names (a namespace by id and by ARN) matches when one of them does.
        return any(_matches(v, condition, values) for v in value)
    if condition == "EQ":
        return str(value) == values[0]
    if condition == "IN":
        return str(value) in values
    if condition == "BEGINS_WITH":
        return str(value).startswith(values[0])
    low, high = (_epoch(v) for v in values)
    return low <= float(value) <= high


def _epoch(value: str) -> float:
    """UPDATE_DATE bounds are Unix times; clients send seconds or milliseconds."""
    number = float(value)
    return number / 1000 if number > 1e11 else number


def filtered(items: Iterable[T], filters: list[dict] | None, fields: dict[str, tuple[Field, set[str]]]) -> list[T]:
    """`fields`: filter name → (value of an item, allowed conditions)."""
    checks = []
    for f in filters or []:
        name, values, condition = f.get("Name"), f.get("Values") or [], f.get("Condition") or "EQ"
        if name not in fields:
            raise invalid_input(f"Filter name {name!r} is not supported here; use one of {sorted(fields)}")
        field, conditions = fields[name]
        if condition not in conditions:
            raise invalid_input(f"Condition {condition} is not supported for filter {name}; use one of {sorted(conditions)}")
        wanted = {"EQ": 1, "BEGINS_WITH": 1, "BETWEEN": 2}.get(condition)
        if (wanted is not None and len(values) != wanted) or not values:
            raise invalid_input(f"Filter {name} with condition {condition} takes {wanted or 'one or more'} value(s), got {len(values)}")
        checks.append((field, condition, [str(v) for v in values]))
    return [item for item in items if all(_matches(field(item), condition, values) for field, condition, values in checks)]


def page(items: list[T], params: dict, maximum: int = MAX_PAGE) -> tuple[list[T], str | None]:
    size = params.get("MaxResults") or maximum
    if not 1 <= int(size) <= maximum:
        raise invalid_input(f"MaxResults must be between 1 and {maximum}")
    token = params.get("NextToken")
    start = 0
    if token:
        try:
            start = int(base64.urlsafe_b64decode(token.encode()).decode().removeprefix("offset:"))
        except ValueError:
            raise invalid_input("The NextToken is invalid") from None
    end = start + int(size)
    next_token = base64.urlsafe_b64encode(f"offset:{end}".encode()).decode() if end < len(items) else None
    return items[start:end], next_token
