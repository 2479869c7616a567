"""Fair share of one device between users, without a worker: the claim order, spread ranks whose peers run,
only sent jobs claimed, drain and undrain, the per-user limit of queued jobs, and each queued job's place in
the API. The same with real worker processes: tests/integration/test_it_shares_a_worker_fairly.py."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from advisor import dispatch, fleet, forecasts, queueing, services, spread
from advisor.engine.remaining import ETA_RATIOS, START_RATIOS, marks_from_json
from advisor.engine.units import interval_text
from advisor.models import CalibrationJob, Device, Recommendation
from advisor.web.jobs import eta
from tests.api.conftest import client_for
from tests.api.test_it_serves_calibrations import URL, _messages_for

pytestmark = pytest.mark.django_db(transaction=True)


def _queue(
    owner: Any, rec: Recommendation, device: Device, n: int, *, sent: bool = True
) -> list[CalibrationJob]:
    """n queued calibrations of `owner` on the device, oldest first (rows only: no message)."""
    made = []
    for _ in range(n):
        job = CalibrationJob.objects.create(
            owner=owner,
            recommendation=rec,
            device=device,
            time_limit_seconds=60,
            batch_sizes=[16],
            threads=[1],
            sent_at=timezone.now() if sent else None,
        )
        made.append(job)
    return made


def _claim(device: Device) -> CalibrationJob:
    """What the worker would claim next: the first of the claim order, marked running as a claim does."""
    kind, pk = queueing.claim_order(device.pk)[0]
    assert kind == "calibration" and CalibrationJob.claim(pk)
    return CalibrationJob.objects.get(pk=pk)


def test_it_serves_users_in_turn(user: Any, other_user: Any, django_user_model: Any, device: Device) -> None:
    third = django_user_model.objects.create_user(username="cy", password="x" * 12)
    recs = {u.pk: services.advise(owner=u, spec=_spec()) for u in (user, other_user, third)}
    a_jobs = _queue(user, recs[user.pk], device, 10)
    (b_job,) = _queue(other_user, recs[other_user.pk], device, 1)
    (c_job,) = _queue(third, recs[third.pk], device, 1)
    started = []
    for _ in range(4):
        job = _claim(device)
        started.append(job.pk)
        CalibrationJob.objects.filter(pk=job.pk).update(status="succeeded", finished_at=timezone.now())
    # A's first, then B's and C's before A's second: each waited behind one of A's at most
    assert started == [a_jobs[0].pk, b_job.pk, c_job.pk, a_jobs[1].pk]


def test_a_user_who_used_the_device_last_waits_for_one_who_did_not(
    user: Any, other_user: Any, device: Device
) -> None:
    rec_a, rec_b = services.advise(owner=user, spec=_spec()), services.advise(owner=other_user, spec=_spec())
    (done,) = _queue(user, rec_a, device, 1)
    CalibrationJob.objects.filter(pk=done.pk).update(status="succeeded", started_at=timezone.now())
    (b_old,) = _queue(other_user, rec_b, device, 1)
    CalibrationJob.objects.filter(pk=b_old.pk).update(
        status="succeeded", started_at=timezone.now() - timedelta(hours=1)
    )
    a_next = _queue(user, rec_a, device, 1)[0]
    b_next = _queue(other_user, rec_b, device, 1)[0]
    assert queueing.claim_order(device.pk) == [("calibration", b_next.pk), ("calibration", a_next.pk)]


def test_a_message_claims_only_jobs_the_broker_took_and_its_own(
    user: Any, rec: Recommendation, device: Device
) -> None:
    """Each claim uses up one message: a job still in the outbox must not take a sent job's message, or the
    sent one would wait with none left for it."""
    (unsent,) = _queue(user, rec, device, 1, sent=False)
    (sent,) = _queue(user, rec, device, 1)
    assert queueing.claim_order(device.pk) == [("calibration", sent.pk)]
    assert queueing.claim_order(device.pk, hint=("calibration", unsent.pk))[0] == ("calibration", unsent.pk)


def test_a_spread_rank_whose_peers_run_goes_before_other_users(
    user: Any, other_user: Any, rec: Recommendation, device: Device
) -> None:
    from tests.api.test_it_serves_spread_calibrations import _register

    other_host = _register("apitest2")
    others = _queue(other_user, services.advise(owner=other_user, spec=_spec()), device, 3)
    rank0, rank1 = spread.submit_spread_calibration(
        owner=user, recommendation=rec, candidate=0, devices=[other_host, device], time_limit_seconds=60
    )
    assert queueing.claim_order(device.pk)[0] == ("calibration", others[0].pk)  # not its turn yet
    assert CalibrationJob.claim(rank0.pk)  # rank 0 runs on its host and waits at the rendezvous
    assert queueing.claim_order(device.pk)[0] == ("calibration", rank1.pk)


@pytest.fixture
def job(user: Any, rec: Recommendation, device: Device) -> CalibrationJob:
    """One calibration queued and sent on the device."""
    (queued,) = _queue(user, rec, device, 1)
    return queued


def test_a_drained_device_claims_nothing_until_undrained(device: Device, job: CalibrationJob) -> None:
    fleet.drain(device=device)
    assert dispatch.run_next("calibration", job.pk) == "drained"
    job.refresh_from_db()
    assert job.status == "queued"
    before = _messages_for(device.queue)
    fleet.undrain(device=device)
    assert _messages_for(device.queue) == before + 1  # its message was used up while drained: sent again
    assert not Device.objects.get(pk=device.pk).draining


def test_a_message_whose_job_was_cancelled_finds_nothing_to_claim(job: CalibrationJob) -> None:
    services.cancel_calibration(job=job)
    assert dispatch.run_next("calibration", job.pk) == "skipped"


def test_it_refuses_jobs_past_the_per_user_limit_as_the_probes_limit_does(
    api: APIClient,
    other_api: APIClient,
    settings: Any,
    rec: Recommendation,
    others_rec: Recommendation,
    device: Device,
) -> None:
    settings.JOBS_QUEUED_PER_USER = 2
    body = {"recommendation": rec.pk, "device": device.pk, "batch_sizes": [16], "threads": [1]}
    assert [api.post(URL, body, format="json").status_code for _ in range(2)] == [202, 202]
    refused = api.post(URL, body, format="json")
    assert refused.status_code == 400
    assert list(refused.json()) == ["queue"] and "JOBS_QUEUED_PER_USER" in refused.json()["queue"][0]
    # another user is not held back by this one's backlog
    assert other_api.post(URL, {**body, "recommendation": others_rec.pk}, format="json").status_code == 202


def test_a_queued_job_shows_its_place_and_expected_start(
    api: APIClient, other_user: Any, rec: Recommendation, device: Device
) -> None:
    body = {"recommendation": rec.pk, "device": device.pk, "batch_sizes": [16], "threads": [1]}
    first = api.post(URL, body, format="json").json()
    second = api.post(URL, body, format="json").json()
    other = client_for(other_user)
    theirs = other.post(
        URL, {**body, "recommendation": services.advise(owner=other_user, spec=_spec()).pk}, format="json"
    ).json()
    places = {
        j["id"]: j["queue"]
        for j in (api.get(f"{URL}{first['id']}/").json(), api.get(f"{URL}{second['id']}/").json())
    }
    their_place = other.get(f"{URL}{theirs['id']}/").json()["queue"]
    # fair share: the other user's first job comes before this user's second
    assert (places[first["id"]]["position"], their_place["position"], places[second["id"]]["position"]) == (
        1,
        2,
        3,
    )
    # expected starts are the work plans' seconds added up (no clock is read): the other user's job starts
    # when the first is expected to end, this user's second after both
    assert places[first["id"]]["starts_in_seconds"] == 0
    assert 0 < their_place["starts_in_seconds"] < places[second["id"]]["starts_in_seconds"]
    assert their_place["expected_start"] and not their_place["draining"]
    # each wait with its 90% range (engine.remaining.START_RATIOS), which the page writes beside it
    wait = their_place["starts_in_seconds"]
    assert their_place["interval"] == pytest.approx([wait * r for r in START_RATIOS], abs=0.1)
    queued = eta("calibration", CalibrationJob.objects.get(pk=theirs["id"]))
    assert f"(90%: {interval_text(*their_place['interval'])})" in queued["text"], queued["text"]
    assert api.get(f"{URL}{first['id']}/").json()["remaining"] is None
    # running: no place, a remaining time instead. Its start is put a day ahead of the clock, so the time it
    # has run reads 0 however slowly this test goes: all of its plan is left, which the other user's job
    # was expected to wait for
    CalibrationJob.claim(first["id"])
    CalibrationJob.objects.filter(pk=first["id"]).update(started_at=timezone.now() + timedelta(days=1))
    running = api.get(f"{URL}{first['id']}/").json()
    assert running["queue"] is None
    assert running["remaining"]["remaining_seconds"] == their_place["starts_in_seconds"]
    assert running["remaining"]["basis"] == "plan"
    # with its 90% range (engine.remaining.ETA_RATIOS on the plan's seconds, no clock read), which the page
    # writes beside it
    low, high = running["remaining"]["interval"]
    planned = running["remaining"]["remaining_seconds"]
    assert [low, high] == pytest.approx([planned * r for r in ETA_RATIOS["plan"]], abs=0.2)  # both rounded
    page = eta("calibration", CalibrationJob.objects.get(pk=first["id"]))
    assert f"(90%: {interval_text(low, high)};" in page["text"], page["text"]
    assert other.get(f"{URL}{theirs['id']}/").json()["queue"]["ahead"] == 1


def _spec() -> dict[str, Any]:
    from tests.conftest import TABULAR_SPEC

    return dict(TABULAR_SPEC)


def test_a_jobs_start_up_comes_from_the_devices_finished_calibrations_else_its_profiling_child(
    user: Any, rec: Recommendation, device: Device
) -> None:
    """Before any calibration ran on it, a device's start-up is its profiling child's (the interpreter and
    torch imported); CHILD_START_S only where neither is known."""
    from advisor.engine.remaining import CHILD_START_S
    from advisor.forecasts import startup_seconds

    assert startup_seconds(device) == CHILD_START_S
    Device.objects.filter(pk=device.pk).update(profile={"kind": "cpu", "child_start_seconds": 1.5})
    device.refresh_from_db()
    assert startup_seconds(device) == 1.5
    (done,) = _queue(user, rec, device, 1)
    CalibrationJob.objects.filter(pk=done.pk).update(
        status=CalibrationJob.SUCCEEDED, finished_at=timezone.now(), marks=[[2.5, 0, 3], [3.0, 1, 3]]
    )
    assert startup_seconds(device) == 2.5


def test_a_running_jobs_re_measure_is_priced_as_the_fastest_reliable_configuration_it_measured(
    api: APIClient, rec: Recommendation, device: Device
) -> None:
    from advisor import forecasts
    from advisor.engine.remaining import marks_from_json, plan_from_json, remaining
    from advisor.engine.sweepplan import SweepPlan, configuration_seconds
    from advisor.models import MeasuredConfiguration

    body = {"recommendation": rec.pk, "device": device.pk, "batch_sizes": [16, 64], "threads": [1]}
    job = CalibrationJob.objects.get(pk=api.post(URL, body, format="json").json()["id"])
    assert job.work_plan["sweep"]["batch_sizes"] == [16, 64]  # stored at submit
    CalibrationJob.claim(job.pk)
    # both configurations measured (64 faster per example but unreliable), then the re-measure announced
    for batch, seconds, unreliable in ((16, 0.01, False), (64, 0.02, True)):
        result = {"status": "ok", "seconds_per_batch": seconds, "unreliable": unreliable}
        MeasuredConfiguration.objects.create(
            job=job, batch_size=batch, threads=1, seconds_per_batch=seconds, result=result
        )
    marks = [[3.0, 0, 2], [4.0, 1, 2], [5.0, 2, 2, 0, 1.0], [6.0, 2, 3, 1]]
    CalibrationJob.objects.filter(pk=job.pk).update(marks=marks)
    job.refresh_from_db()
    now = job.started_at + timedelta(seconds=6.5)

    left = forecasts.left(job, at_pace=1.0, now=now)
    plan = plan_from_json(job.work_plan, 60.0)
    sweep = SweepPlan(**{**job.work_plan["sweep"], "batch_sizes": (16, 64), "threads": (1,)})
    priced = replace(plan, restart_step_s=configuration_seconds(0.01, sweep))
    assert left.seconds == pytest.approx(remaining(priced, marks_from_json(marks), 6.5).seconds)
    assert left.seconds != pytest.approx(remaining(plan, marks_from_json(marks), 6.5).seconds)


@pytest.mark.parametrize(
    ("chance", "threads", "stored"),
    [
        (None, None, [4.0, 1, 8]),
        (0.25, None, [4.0, 1, 8, 0, 0.25]),
        (None, 2, [4.0, 1, 8, 0, None, 2]),
        (0.25, 2, [4.0, 1, 8, 0, 0.25, 2]),
    ],
)
def test_it_keeps_what_each_progress_event_said_in_the_jobs_marks(
    chance: float | None, threads: int | None, stored: list[float | None]
) -> None:
    """The worker's marks (forecasts.add_mark) as the remaining time reads them back: the chance of a
    re-measure and the thread count of the configuration starting, each where the job said it."""
    first: list[float | None] = [2.0, 0, 8]
    marks = forecasts.add_mark([first], at_s=4.0, done=1, total=8, restart_chance=chance, threads=threads)
    assert marks == [first, stored]
    (_, mark) = marks_from_json(marks)
    assert (mark.restart_chance, mark.threads) == (chance, threads)


@pytest.mark.parametrize(
    ("last", "stored"),
    [
        ([4.0, 1, 8], [4.0, 1, 8, 0, None, None, 20.8, 9.2]),  # a mark that said nothing more: padded
        ([4.0, 1, 8, 0, 0.5, 2], [4.0, 1, 8, 0, 0.5, 2, 20.8, 9.2]),
        ([4.0, 1, 8, 0, 0.5, 2, 25.0, 6.0], [4.0, 1, 8, 0, 0.5, 2, 20.8, 9.2]),  # the latest word only
    ],
)
def test_a_slow_step_says_on_its_mark_how_long_it_still_needs(
    last: list[float | None], stored: list[float | None]
) -> None:
    """A configuration's own word (calibration.child's ticks) changes no count: it goes on the mark its step
    started at, and the remaining time reads the step under way by it."""
    first: list[float | None] = [2.0, 0, 8]
    marks = forecasts.add_mark([first, last], at_s=9.2, done=1, total=8, threads=2, step_left_s=20.8)
    assert marks == [first, stored]
    (_, mark) = marks_from_json(marks)
    assert (mark.step_left_s, mark.step_left_at_s) == (20.8, 9.2)
    assert forecasts.add_mark(marks, at_s=9.5, done=1, total=8, threads=2) is None  # nothing new said
