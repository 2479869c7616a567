"""A JSONField encoder that writes with orjson.

Every POST /recommendations/ stores the engine's answer (6.5 KB of JSON) and its spec; the standard library's
encoder spent about a tenth of such a request's CPU time writing them
(bench/results/api_amd-epyc-2c/README.md). Django calls
`json.dumps(value, cls=encoder)`, which calls `encoder(...).encode(value)`: that is the documented place to
swap the writer. What orjson cannot write (integers beyond 64 bits) goes through the standard encoder."""

from __future__ import annotations

import json
from typing import Any

import orjson


class FastEncoder(json.JSONEncoder):
    def encode(self, o: Any) -> str:
        try:
            return orjson.dumps(o, option=orjson.OPT_NON_STR_KEYS).decode()
        except orjson.JSONEncodeError:
            return super().encode(o)
