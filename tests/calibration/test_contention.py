"""What measure() sees of other work on the machine: /proc and the cgroup's cpu.stat read from files laid
out as Linux lays them out (v1 and v2), samples between steps, and the verdict's reasons. The last test reads
this machine's own files, whatever they say."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.calibration import measure
from advisor.calibration.contention import Probe, cgroup_files, judge, proc_stat, running_tasks
from advisor.contract import Contention
from tests.calibration import candidates as C

STAT = (
    "cpu  {user} 0 {system} {idle} 0 0 0 {steal} 0 0\ncpu0 1 2 3 4\ncpu1 1 2 3 4\nintr 1 2 3\n"
    "procs_running 3\n"
)


class Machine:
    """A /proc and /sys/fs/cgroup under tmp_path, whose counters a test moves between reads."""

    def __init__(self, root: Path, cgroup: str) -> None:
        self.proc, self.cgroup = root / "proc", root / "cgroup"
        (self.proc / "self").mkdir(parents=True)
        (self.proc / "self" / "cgroup").write_text(cgroup)
        self.set(user=100, system=50, idle=800, steal=0, running=1)

    def set(self, *, user: int, system: int, idle: int, steal: int, running: int) -> None:
        stat = STAT.format(user=user, system=system, idle=idle, steal=steal)
        (self.proc / "stat").write_text(stat)
        (self.proc / "loadavg").write_text(f"0.50 0.40 0.30 {running}/158 11830\n")

    def cgroup_file(self, relative: str, text: str) -> None:
        path = self.cgroup / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_it_reads_proc_stat_and_loadavg() -> None:
    assert proc_stat(STAT.format(user=10, system=5, idle=80, steal=5)) == (100, 5, 2)
    assert proc_stat("") is None
    assert running_tasks("0.25 0.35 0.22 2/158 11830") == 2
    assert running_tasks("garbage") is None


def test_it_finds_the_cgroup_files_of_v2_and_of_v1(tmp_path: Path) -> None:
    v2 = Machine(tmp_path / "v2", "0::/user.slice/job\n")
    v2.cgroup_file("user.slice/job/cpu.stat", "usage_usec 5\n")
    assert cgroup_files("0::/user.slice/job\n", v2.cgroup) == (
        "v2",
        v2.cgroup / "user.slice/job/cpu.stat",
        None,
    )
    v1 = Machine(tmp_path / "v1", "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n")
    v1.cgroup_file("cpu,cpuacct/docker/abc/cpu.stat", "nr_throttled 0\n")
    v1.cgroup_file("cpu,cpuacct/docker/abc/cpuacct.usage", "0\n")
    found = cgroup_files("4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n", v1.cgroup)
    assert found == (
        "v1",
        v1.cgroup / "cpu,cpuacct/docker/abc/cpu.stat",
        v1.cgroup / "cpu,cpuacct/docker/abc/cpuacct.usage",
    )
    assert cgroup_files("", tmp_path) is None


def _probe(machine: Machine, clock: list[float]) -> Probe:
    return Probe(proc=machine.proc, cgroup_root=machine.cgroup, clock=lambda: clock[0])


def test_a_probe_measures_steal_runnable_tasks_and_throttling_over_the_loop(tmp_path: Path) -> None:
    machine = Machine(tmp_path, "0::/job\n")
    machine.cgroup_file("job/cpu.stat", "usage_usec 1000000\nnr_throttled 2\nthrottled_usec 100000\n")
    clock = [0.0]
    probe = _probe(machine, clock)
    probe.start()  # one sample: 1 running
    for running, t in ((4, 0.001), (4, 0.05), (3, 0.1), (1, 0.15)):
        machine.set(user=100, system=50, idle=800, steal=0, running=running)
        clock[0] = t
        probe.tick()  # the first, 1 ms after start, is skipped: at most one sample every 20 ms
    machine.set(user=180, system=60, idle=840, steal=20, running=2)
    machine.cgroup_file("job/cpu.stat", "usage_usec 2500000\nnr_throttled 12\nthrottled_usec 400000\n")
    clock[0] = 0.2
    found = probe.finish(cpu_seconds=0.1, timed_seconds=0.2, threads=1)
    assert probe.runnable == [1, 4, 3, 1, 2]
    assert found["cpus"] == 2 and found["runnable_max"] == 4 and found["runnable_median"] == 2
    assert found["runnable_above_cpus"] == pytest.approx(2 / 5)
    assert found["steal_share"] == pytest.approx(20 / 150)
    assert found["cpu_per_wall"] == pytest.approx(0.5) and found["cpu_share"] == pytest.approx(0.5)
    assert found["cgroup"] == {
        "version": "v2",
        "usage_seconds": pytest.approx(1.5),
        "nr_throttled": 10.0,
        "throttled_seconds": pytest.approx(0.3),
    }
    codes = [r["code"] for r in judge(found, halfwidth=0.01, timed_seconds=0.2, iterations=50)]
    assert codes == ["cpu_share", "runnable", "steal", "throttled"]


def _quiet(**changes: object) -> Contention:
    quiet: Contention = {
        "cpus": 2,
        "cpu_share": 0.98,
        "cpu_per_wall": 0.98,
        "runnable_median": 1.0,
        "runnable_max": 3,
        "runnable_above_cpus": 0.05,
        "samples": 40,
        "steal_share": 0.0,
        "cgroup": {"version": "v1", "usage_seconds": 1.0, "nr_throttled": 0.0, "throttled_seconds": 0.0},
        "gpu": None,
    }
    return {**quiet, **changes}  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("changes", "codes"),
    [
        ({}, []),
        ({"cpu_per_wall": 0.84}, ["cpu_share"]),
        ({"cpu_per_wall": 0.86, "cpu_share": 0.43}, []),  # two threads, one core's worth: runnable decides
        ({"runnable_above_cpus": 0.25}, ["runnable"]),
        ({"steal_share": 0.05}, ["steal"]),
        (
            {"cgroup": {"version": "v2", "usage_seconds": 1, "nr_throttled": 3, "throttled_seconds": 0.02}},
            ["throttled"],
        ),
        ({"cpu_per_wall": None, "gpu": {"other_processes": 1, "utilisation": 97.0}}, ["gpu_shared"]),
        ({"cpu_per_wall": None, "gpu": {"other_processes": 0, "utilisation": 97.0}}, []),
    ],
)
def test_each_sign_of_contention_is_a_reason(changes: dict[str, object], codes: list[str]) -> None:
    reasons = judge(_quiet(**changes), halfwidth=0.02, timed_seconds=1.0, iterations=100)
    assert [r["code"] for r in reasons] == codes
    assert all(r["text"] for r in reasons)


def test_measure_reports_what_this_machine_shows_and_judges_it() -> None:
    """Whatever the machine is doing now: the figures are there, and `unreliable` is exactly their
    verdict."""
    r = measure(C.ffn(), batch_size=8, threads=1, min_iterations=5, min_seconds=0.05)
    c = r["contention"]
    assert c["samples"] >= 2 and c["cpus"] >= 1 and c["runnable_max"] >= 1
    assert 0.0 <= c["steal_share"] <= 1.0 and c["cpu_per_wall"] > 0
    assert r["stopped"] in {"precise", "time"}
    expected = judge(
        c, halfwidth=r["interval_halfwidth"], timed_seconds=sum(r["samples"]), iterations=r["iterations"]
    )
    assert r["unreliable_reasons"] == expected and r["unreliable"] == bool(expected)
    assert r["trimmed_mean_seconds_per_batch"] > 0 and r["noisy"] == (
        r["iqr"] / r["seconds_per_batch"] > 0.10
    )
