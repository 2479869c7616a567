"""The API's token check: one query, and the same answers as DRF's own TokenAuthentication."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from advisor.api.auth import TokenAuthentication

pytestmark = pytest.mark.django_db


def _answer(auth: authentication.TokenAuthentication, key: str) -> tuple[Any, ...]:
    try:
        user, token = auth.authenticate_credentials(key)
    except exceptions.AuthenticationFailed as exc:
        return ("refused", str(exc.detail))
    return ("accepted", user.pk, user.username, token.key, token.user_id, token.created)


@pytest.fixture
def keys(user: Any) -> dict[str, str]:
    inactive = get_user_model().objects.create_user("retired", password="x" * 12, is_active=False)
    return {
        "active": Token.objects.create(user=user).key,
        "inactive": Token.objects.create(user=inactive).key,
        "unknown": "0" * 40,
        "empty": "",
    }


@pytest.mark.parametrize("case", ["active", "inactive", "unknown", "empty"])
def test_it_answers_as_drf_does(keys: dict[str, str], case: str) -> None:
    ours = _answer(TokenAuthentication(), keys[case])
    assert ours == _answer(authentication.TokenAuthentication(), keys[case])
    assert ours[0] == ("accepted" if case == "active" else "refused")


def test_it_uses_one_query(keys: dict[str, str], user: Any, django_assert_num_queries: Any) -> None:
    with django_assert_num_queries(1):
        found, token = TokenAuthentication().authenticate_credentials(keys["active"])
        assert token.user.username == found.username == user.username  # no second query for token.user
    assert found.check_password("correct-horse-battery")  # a whole user row, password hash included


def test_it_refuses_a_deleted_token(keys: dict[str, str], tabular_spec: Any) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {keys['active']}")
    assert client.post("/api/v1/recommendations/", tabular_spec, format="json").status_code == 201
    Token.objects.filter(key=keys["active"]).delete()
    response = client.post("/api/v1/recommendations/", tabular_spec, format="json")
    assert response.status_code == 401 and response.json()["detail"] == "Invalid token."
