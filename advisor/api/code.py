"""The code downloads: a candidate's model.py, train.py and README.md (and, from a probe, split.json) as a ZIP
archive, or one of them with `?file=`. The API's only answers that are not JSON (its errors still are)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import viewsets
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from advisor import downloads, export, queries
from advisor.api.views import FIELD_ERRORS, NOT_FOUND
from advisor.probe import queries as probe_queries

MEDIA_TYPES = {
    ".py": "text/x-python; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".json": "application/json",
}
FILE = OpenApiParameter(
    "file",
    str,
    enum=list(export.FILES),
    description="one file instead of the ZIP archive (split.json: a probe's download only)",
)
INDEX = OpenApiParameter(
    "index",
    str,
    OpenApiParameter.PATH,
    pattern="^[0-9]{1,18}$",
    description="the candidate's place in `candidates`, 0 first",
    examples=[OpenApiExample("the first candidate", value="0")],
)
ROLE = OpenApiParameter(
    "role",
    str,
    enum=list(downloads.ROLES),
    description="the probe's shallow or deep candidate (default: the one its verdict chose)",
)
FILES = {
    (200, "application/zip"): OpenApiResponse(
        OpenApiTypes.BINARY, description="model.py, train.py, README.md"
    ),
    (200, "text/x-python"): OpenApiResponse(OpenApiTypes.STR, description="?file=model.py or train.py"),
    (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description="?file=README.md"),
    (200, "application/json"): OpenApiResponse(
        OpenApiTypes.OBJECT, description="?file=split.json: the probe's examples of each part, by index"
    ),
    400: FIELD_ERRORS,
    404: NOT_FOUND,
}


class FixedTypes(BaseContentNegotiation):
    """The files' types are what they are and errors are JSON, whatever `Accept` asks (no 406)."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Request, renderers: Any, format_suffix: str | None = None) -> Any:
        renderer: BaseRenderer = renderers[0]
        return renderer, renderer.media_type


class CodeViewSet(viewsets.ViewSet):
    """Each user sees only their own rows (others' are 404, not 403: their ids are not disclosed); staff see
    all."""

    content_negotiation_class = FixedTypes

    @extend_schema(
        parameters=[INDEX, FILE],
        responses=FILES,
        summary="A candidate as plain PyTorch code: model.py, train.py, README.md (a ZIP)",
    )
    def candidate(self, request: Request, pk: int, index: int) -> HttpResponse | Response:
        rec = queries.recommendation_for(request.user, pk)
        download = None if rec is None else downloads.candidate_download(rec, index)
        return _answer(request, download)

    @extend_schema(
        parameters=[FILE, ROLE],
        responses=FILES,
        summary="The code of a candidate the probe trained, with the probe's split (split.json)",
    )
    def probe(self, request: Request, pk: int) -> HttpResponse | Response:
        role = request.query_params.get("role")
        if role is not None and role not in downloads.ROLES:
            return Response({"role": [f"one of {', '.join(downloads.ROLES)}"]}, status=400)
        job = probe_queries.probe_for(request.user, pk)
        download = None if job is None else downloads.probe_download(job, role)
        return _answer(request, download)


def _answer(request: Request, download: export.Download | None) -> HttpResponse | Response:
    wanted = request.query_params.get("file")
    if wanted is not None and wanted not in export.FILES:
        return Response({"file": [f"one of {', '.join(export.FILES)}"]}, status=400)
    if download is None:
        return Response({"detail": "No such candidate of yours."}, status=404)
    found = export.files(download)
    folder = export.folder_name(download)
    if wanted is None:
        body = export.zip_bytes(found, folder)
        return _file(body, "application/zip", f"{folder}.zip")
    if wanted not in found:
        return Response(
            {"detail": f"This download has no {wanted} (a probe's split, once it split)."}, status=404
        )
    media = MEDIA_TYPES["." + wanted.rsplit(".", 1)[1]]
    return _file(found[wanted].encode(), media, wanted)


def _file(body: bytes, media_type: str, name: str) -> HttpResponse:
    answer = HttpResponse(body, content_type=media_type)
    answer["Content-Disposition"] = f'attachment; filename="{name}"'
    return answer
