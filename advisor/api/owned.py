"""The one ownership rule of every API view set (advisor's and the probe's)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework import viewsets


class Owned(viewsets.GenericViewSet[Any]):
    """Each user sees only their own rows (others' are 404, not 403: their ids are not disclosed); staff see
    all."""

    def own(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        user = self.request.user
        return queryset if user.is_staff else queryset.filter(owner=user)

    def mine(self, model: type[Any], pk: int) -> Any:
        """The caller's own row (staff: any); None for others' ids, which are not disclosed."""
        return self.own(model.objects.all()).filter(pk=pk).first()
