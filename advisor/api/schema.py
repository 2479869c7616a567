"""Completes the generated OpenAPI schema with the answers every operation can give, so that an outside client
(or a fuzzer checking status-code conformance) finds each real answer documented: 401 without credentials,
404 for an `{id}` that is not the caller's, 404 for a page past the end of a list, 414 for a query string
longer than the server reads. And names request bodies' components as the contract names them."""

from __future__ import annotations

from typing import Any, TypeVar

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

_Body = TypeVar("_Body", bound=type)


def request_body(serializer: _Body) -> _Body:
    """Names a request body's component as its serializer is named: `CalibrationRequestSerializer` gives
    `CalibrationRequest`. drf-spectacular appends `Request` to every component a request uses (the setting
    COMPONENT_SPLIT_REQUEST, which keeps read-only fields out of them), so the name it is given here lacks
    it; otherwise a generated client would get a `CalibrationRequestRequest`."""
    name = serializer.__name__.removesuffix("Serializer").removesuffix("Request")
    return extend_schema_serializer(component_name=name)(serializer)


DETAIL = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
_ERROR = {"application/json": {"schema": DETAIL}}
COMMON = {
    "401": "no valid token or session",
}
ON_OBJECT = {"404": "no such object of yours"}
ON_PAGE = {"404": "no such page (page beyond the last, or not a positive number)"}
# Answered by gunicorn itself, before the app, as an HTML page: a query string past its 4,094-byte
# request line.
TOO_LONG = {"414": {"description": "request line too long", "content": {"text/html": {"schema": {}}}}}


class FieldErrors(serializers.Serializer[dict[str, list[str]]]):
    """A 400's body as a named schema component (never instantiated; _FieldErrorsSchema maps it)."""


class _FieldErrorsSchema(OpenApiSerializerExtension):
    target_class = FieldErrors

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        messages = {"type": "array", "items": {"type": "string"}}
        return {
            "type": "object",
            "description": "the messages of each refused field by its dotted path, e.g. "
            '{"data.input_shape": ["tabular needs [features]"]}; a list\'s by item index, '
            '{"batch_sizes": {"0": [...]}}; a body that is not JSON: {"detail": "JSON parse error ..."}',
            "additionalProperties": {
                "oneOf": [
                    messages,
                    {"type": "object", "additionalProperties": messages},
                    {"type": "string"},
                ]
            },
        }


def add_common_errors(result: dict[str, Any], **_: Any) -> dict[str, Any]:
    """A drf-spectacular postprocessing hook: adds only the answers an operation does not already document."""
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            extra = dict(COMMON)
            if "{" in path:
                extra |= ON_OBJECT
            if method == "get" and any(p.get("name") == "page" for p in operation.get("parameters", [])):
                extra |= ON_PAGE
            for code, description in extra.items():
                operation["responses"].setdefault(code, {"description": description, "content": _ERROR})
            if any(p.get("in") == "query" for p in operation.get("parameters", [])):
                for code, response in TOO_LONG.items():
                    operation["responses"].setdefault(code, response)
    return result
