"""Token authentication in one hand-written query.

DRF's TokenAuthentication looks the token up through the ORM (`select_related("user").get(key=...)`); building
that query is about 0.45 ms of Python per request, a sixth of a whole POST /recommendations/ on gunicorn
(bench/results/api_amd-epyc-2c/README.md). The same join written once as SQL costs 0.15 ms. Behaviour is
DRF's: the same 401s and messages, `request.auth` is the Token."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connections, router
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

Converter = Callable[[Any, Any, Any], Any]


@cache
def _query(db: str) -> tuple[str, list[str], list[str], list[tuple[int, Any, list[Converter]]]]:
    """SELECT token columns, user columns FROM token JOIN user WHERE key = %s; the two attname lists; and
    the converters the ORM would apply to each column (on SQLite: text to an aware datetime, 0/1 to bool)."""
    user_model = get_user_model()
    connection = connections[db]
    quote = connection.ops.quote_name
    token_fields = list(Token._meta.concrete_fields)
    user_fields = list(user_model._meta.concrete_fields)
    converters = []
    for i, field in enumerate(token_fields + user_fields):
        col = field.get_col(field.model._meta.db_table)
        found = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
        if found:
            converters.append((i, col, found))
    columns = [f"t.{quote(str(f.column))}" for f in token_fields]
    columns += [f"u.{quote(str(f.column))}" for f in user_fields]
    user_fk = Token._meta.get_field("user")
    sql = (
        f"SELECT {', '.join(columns)} FROM {quote(Token._meta.db_table)} t "
        f"JOIN {quote(user_model._meta.db_table)} u "
        f"ON u.{quote(str(user_model._meta.pk.column))} = t.{quote(str(user_fk.column))} "
        f"WHERE t.{quote(str(Token._meta.get_field('key').column))} = %s"
    )
    return sql, [f.attname for f in token_fields], [f.attname for f in user_fields], converters


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        db = router.db_for_read(Token)
        connection = connections[db]
        sql, token_names, user_names, converters = _query(db)
        with connection.cursor() as cursor:
            cursor.execute(sql, [key])
            found = cursor.fetchone()
        if found is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        row = list(found)
        for i, col, convert in converters:
            for converter in convert:
                row[i] = converter(row[i], col, connection)
        split = len(token_names)
        user = get_user_model().from_db(db, user_names, row[split:])
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        token = Token.from_db(db, token_names, row[:split])
        token.user = user  # the join already fetched it: no second query on `request.auth.user`
        return user, token
