"""Sign-in that resists guessing (django-axes): failed sign-ins are counted per account and address together,
on the login page and the admin's alike; a locked pair gets a page that says why and for how long, and an
administrator unlocks it. Another user behind the guesser's proxy, and the account's owner from their own
address, still sign in; API tokens are not affected."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
PROXY = "127.0.0.1"  # every request reaches gunicorn from the proxy; the client is in X-Forwarded-For
GUESSER, OWNER = "203.0.113.9", "198.51.100.7"
RIGHT = "correct-horse-battery"


@pytest.fixture(autouse=True)
def behind_a_proxy(settings: Any) -> None:
    settings.FORWARDED_PROXIES = 1
    settings.AXES_FAILURE_LIMIT = 5


def _sign_in(username: str, password: str, address: str, url: str = LOGIN, sent: str = "") -> Any:
    forwarded = f"{sent}, {address}" if sent else address  # the proxy appends the address it saw
    return Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded).post(
        url, {"username": username, "password": password}
    )


def _guess(times: int, username: str = "ada", address: str = GUESSER) -> None:
    for _ in range(times):
        assert _sign_in(username, "wrong-guess", address).status_code == 200  # the form again, with its error


def _lock(username: str = "ada", address: str = GUESSER) -> None:
    """Five wrong passwords: the fifth is answered with the lockout page."""
    _guess(4, username, address)
    assert _sign_in(username, "wrong-guess", address).status_code == 429


def test_guesses_lock_the_account_from_that_address_with_a_clear_message(user: Any) -> None:
    _lock()
    locked = _sign_in("ada", RIGHT, GUESSER)  # even the right password, now
    assert locked.status_code == 429
    assert b"Too many failed sign-ins" in locked.content and b"try again in" in locked.content
    assert b"administrator" in locked.content
    # a client cannot talk its way out by writing its own X-Forwarded-For: ours appended the real one
    assert _sign_in("ada", RIGHT, GUESSER, sent="192.0.2.1").status_code == 429


def test_others_behind_the_same_proxy_and_the_owner_elsewhere_still_sign_in(
    user: Any, other_user: Any
) -> None:
    _lock()
    assert _sign_in("bob", RIGHT, GUESSER).status_code == 302  # same address, another account
    assert _sign_in("ada", RIGHT, OWNER).status_code == 302  # same account, the owner's own address


def test_the_admin_sign_in_counts_and_is_locked_alike(user: Any) -> None:
    user.is_staff = True
    user.save()
    for _ in range(4):
        assert _sign_in("ada", "wrong-guess", GUESSER, url="/admin/login/").status_code == 200
    assert _sign_in("ada", "wrong-guess", GUESSER, url="/admin/login/").status_code == 429
    assert _sign_in("ada", RIGHT, GUESSER, url="/admin/login/").status_code == 429
    assert _sign_in("ada", RIGHT, GUESSER).status_code == 429  # one count for both forms


def test_an_administrator_unlocks_at_once(user: Any) -> None:
    _lock()
    call_command("axes_reset_username", "ada")
    assert _sign_in("ada", RIGHT, GUESSER).status_code == 302


def test_a_success_before_the_limit_starts_the_count_again(user: Any) -> None:
    _guess(4)
    assert _sign_in("ada", RIGHT, GUESSER).status_code == 302
    _guess(4)
    assert _sign_in("ada", RIGHT, GUESSER).status_code == 302


def test_api_tokens_are_not_affected(user: Any) -> None:
    _lock()
    token, _ = Token.objects.get_or_create(user=user)
    client = Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=GUESSER, HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/v1/recommendations/").status_code == 200


@pytest.mark.slow
def test_in_a_browser_the_lockout_says_what_happened(chromium_path: str, live_server: Any, user: Any) -> None:
    from tests.web.browser import open_page, shoot

    with open_page(chromium_path, live_server.url, login=False) as tab:
        for _ in range(5):
            tab.goto("/accounts/login/")
            tab.fill("#id_username", "ada")
            tab.fill("#id_password", "wrong-guess")
            tab.click("button[type=submit]")
        assert "Too many failed sign-ins" in tab.inner_text("h1")
        assert "paused after 5 wrong passwords in a row; try again in 15 minutes" in tab.inner_text(
            "#locked-out"
        )
        shoot(tab, "locked-out")
