"""Worker hosts' step results come back through the deployment's Postgres, not through the broker (issue 38).

The host fault run of 2026-11-30 restarted RabbitMQ mid-run: the run worker, polling its steps' results on the
broker (dagster-celery's default `rpc://` backend), died with `ConnectionResetError` in `result.ready()`, and its retry
failed at its first send. Here, on a real PostgreSQL (Debian's, on 127.0.0.1) and with no broker listening at all,
a result the hosts' app writes is read by the run worker's app: polling a step never touches the broker.
"""

from __future__ import annotations

import importlib
import sys

import pytest
from celery.backends.database import DatabaseBackend

from swe_forge_dagster.orchestration import celery_hosts
from swe_forge_dagster.orchestration.celery_hosts import BROKER_SETTING, RESULTS_SETTING, results_url, results_url_for
from tests.support.celery_apps import BROKER, executor_app

EVENTS = ['{"__class__": "DagsterEvent", "event_type_value": "STEP_SUCCESS"}']
"""What a step's task returns: its events, serialized (dagster-celery-docker's `_execute_step_docker`)."""


def test_a_step_result_written_on_a_host_is_read_by_the_run_worker_with_the_broker_down(
    postgres_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = results_url_for(postgres_db)
    monkeypatch.setenv(BROKER_SETTING, BROKER)  # port 1: nothing listens there
    monkeypatch.setenv(RESULTS_SETTING, results)
    sys.modules.pop("swe_forge_dagster.orchestration.celery_app", None)
    host_app = importlib.import_module("swe_forge_dagster.orchestration.celery_app").app
    run_worker_app = executor_app(results)
    assert isinstance(host_app.backend, DatabaseBackend) and isinstance(run_worker_app.backend, DatabaseBackend)

    pending = run_worker_app.AsyncResult("step-a")
    assert not pending.ready()  # polled while the step runs: an answer from Postgres, no broker needed

    host_app.backend.mark_as_done("step-a", EVENTS)  # what the host's worker does once the step ended
    done = run_worker_app.AsyncResult("step-a")
    assert done.ready()
    assert done.get(timeout=5) == EVENTS


@pytest.mark.parametrize("url", ["", "rpc://", "amqp://user:secret@127.0.0.1:5672//", "db+postgresql://u:p@h/db"])
def test_a_result_backend_through_the_broker_or_unnamed_is_refused(url: str) -> None:
    environ = {BROKER_SETTING: BROKER, RESULTS_SETTING: url}
    with pytest.raises(ValueError, match=RESULTS_SETTING):
        results_url(environ)
    with pytest.raises(ValueError, match=RESULTS_SETTING):
        celery_hosts.executor_config("image", [], "/tmp", environ)


def test_the_results_url_is_derived_from_the_deployments_postgres_url_with_its_driver() -> None:
    expected = "db+postgresql+psycopg2://swe:pw@127.0.0.1:5433/dagster"
    for url in ("postgresql://swe:pw@127.0.0.1:5433/dagster", "postgres://swe:pw@127.0.0.1:5433/dagster"):
        assert results_url_for(url) == expected
    with pytest.raises(ValueError, match="SWE_FORGE_POSTGRES_URL"):
        results_url_for("mysql://swe:pw@127.0.0.1/dagster")
