"""The Celery app each worker host runs (`celery -A swe_forge_dagster.orchestration.celery_app worker`).

dagster-celery-docker's own task (`execute_step_docker`: one step in a container of the project image on this
worker's Docker engine), in an app with the settings the run workers' executor uses (`celery_hosts`), so a step is
acknowledged only once it ended and comes back to the queue when its host dies; its base (`step_once.StepOnce`)
reads the run's record first, so a message the broker delivers again never runs a step that already succeeded.
"""

from __future__ import annotations

from dagster_celery.make_app import make_app_with_task_routes
from dagster_celery_docker.executor import create_docker_task

from swe_forge_dagster.orchestration.celery_hosts import QUEUE, broker_url, celery_settings, results_url
from swe_forge_dagster.orchestration.step_once import StepOnce

app = make_app_with_task_routes(
    task_routes={"execute_step_docker": {"queue": QUEUE, "routing_key": f"{QUEUE}.execute_step_docker"}},
    app_args={"broker": broker_url(), "backend": results_url(), "config_source": celery_settings()},
)
execute_step_docker = create_docker_task(app, base=StepOnce)
