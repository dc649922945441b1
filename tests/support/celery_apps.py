"""The Celery apps of the worker hosts, built as the run worker's executor builds its own (`celery_hosts`), for tests
that need no broker: `tests/test_celery_queues.py`, `tests/test_celery_results.py`."""

from __future__ import annotations

from dagster_celery.make_app import make_app

from swe_forge_dagster.orchestration import celery_hosts
from swe_forge_dagster.orchestration.celery_hosts import BROKER_SETTING, RESULTS_SETTING

BROKER = "amqp://user:secret@127.0.0.1:1//"
"""A broker URL nothing listens at."""
RESULTS = "db+postgresql+psycopg2://user:secret@127.0.0.1:1/dagster"


def executor_app(results: str = RESULTS) -> object:
    """The Celery app dagster-celery's executor makes for a run (its settings from `celery_hosts`; the backend as
    Dagster resolves the config's `{"env": ...}`)."""
    environ = {BROKER_SETTING: BROKER, RESULTS_SETTING: results}
    config = celery_hosts.executor_config("image", [], "/tmp", environ)
    assert config["backend"] == {"env": RESULTS_SETTING}  # named: its password never enters the job's snapshot
    return make_app({"broker": BROKER, "backend": results, "config_source": config["config_source"]})
