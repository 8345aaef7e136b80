"""Hooks of the whole suite. Each test folder holds the tests of one layer of the package (rules, env, agents,
evaluation, training, cli, web, project); a folder's own conftest.py holds the fixtures its modules share, and
tests/helpers/ the helpers they import (``from helpers import ...``, ``from helpers.web import ...``).

A test module that needs an optional extra starts with ``pytest.importorskip`` for it: skipped without the extra,
and a failure under ``make test`` (:data:`helpers.EVERY_EXTRA`), which installs every extra.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

# Ray's local test instances bind to the loopback address only (read when ray is first imported;
# subprocesses started by the tests inherit it). Nothing in the tests talks to another address.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
from helpers import EVERY_EXTRA

# A suite started in the background by a non-interactive shell inherits SIGINT ignored, and so would every command
# the Ctrl-C tests start; those tests stand for a terminal's Ctrl-C, so the suite takes SIGINT back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _as_missing_extra_error(report: pytest.CollectReport | pytest.TestReport) -> None:
    """Turn a skipped report into a failure that says ``make test`` expects every extra."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"{reason}: GOBOOM_TEST_EVERY_EXTRA=1 (make test) expects every extra to be installed"


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[pytest.CollectReport]:
    """Under :data:`EVERY_EXTRA`, a test module skipped while it is collected (``pytest.importorskip`` at its
    top, the only module-wide skip in this suite) is a collection error."""
    report = yield
    if EVERY_EXTRA and report.skipped:
        _as_missing_extra_error(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[pytest.TestReport]:
    """Under :data:`EVERY_EXTRA`, a test skipped by ``pytest.importorskip`` inside it is a failure."""
    report = yield
    if EVERY_EXTRA and report.skipped and "could not import" in str(report.longrepr):
        _as_missing_extra_error(report)
    return report
