"""Evaluate many tasks with N always running: a pool, not batches.

The seed's harness ran tasks in chunks of `--parallel` and waited for the slowest of each chunk;
with agent times that vary by minutes, most slots sat idle. Here a task starts as soon as any
slot frees up (`ThreadPoolExecutor` with N workers; the work is Docker I/O, so threads suffice),
results are reported as they finish, and returned in input order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from functools import partial
from pathlib import Path

from swe_forge_dagster.harness.models import HarnessConfig, HarnessTask, TaskLoadError, TaskResult
from swe_forge_dagster.harness.run import Harness
from swe_forge_dagster.harness.session import evaluate_and_record

Evaluate = Callable[[HarnessTask | TaskLoadError], TaskResult]
OnResult = Callable[[TaskResult], None]


def run_pool(
    items: Sequence[HarnessTask | TaskLoadError],
    evaluate: Evaluate,
    parallel: int,
    on_result: OnResult | None = None,
    on_abort: Callable[[], None] | None = None,
) -> list[TaskResult]:
    """`evaluate` every task with at most `parallel` at once, refilling a slot the moment it frees.

    On an interrupt, `on_abort` runs before the pool waits for its running tasks, so it can make
    them end now (remove their containers) instead of after their agents' timeouts. Unreadable
    inputs (`TaskLoadError`) are evaluated first, in the calling thread (they take no slot).
    """
    report = on_result or (lambda _result: None)
    results: list[TaskResult | None] = [None] * len(items)
    pending = [(index, item) for index, item in enumerate(items) if isinstance(item, HarnessTask)]
    for index, item in enumerate(items):
        if isinstance(item, TaskLoadError):
            results[index] = evaluate(item)
            report(results[index])  # type: ignore[arg-type]
    with ThreadPoolExecutor(max_workers=max(1, parallel), thread_name_prefix="harness-task") as pool:
        running: dict[Future[TaskResult], int] = {}
        queue = iter(pending)
        try:
            for index, task in queue:
                running[pool.submit(evaluate, task)] = index
                if len(running) >= parallel:
                    break
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    index = running.pop(future)
                    results[index] = future.result()
                    report(results[index])  # type: ignore[arg-type]
                    follow = next(queue, None)
                    if follow is not None:
                        running[pool.submit(evaluate, follow[1])] = follow[0]
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            if on_abort is not None:
                on_abort()
            raise
    return [result for result in results if result is not None]


def run_harness(
    items: Sequence[HarnessTask | TaskLoadError],
    config: HarnessConfig,
    *,
    harness: Harness | None = None,
    on_result: OnResult | None = None,
    lake_dir: Path | None = None,
) -> list[TaskResult]:
    """Evaluate every item with `config.parallel` tasks running at all times; results in input order.

    With `lake_dir`, each result is also stored in the `eval_results` dataset as it finishes
    (`session.evaluate_and_record`, the function the `eval_result` asset runs per task).
    """
    if harness is None:
        with Harness(config) as own:
            return run_harness(items, config, harness=own, on_result=on_result, lake_dir=lake_dir)
    evaluate = partial(evaluate_and_record, harness, lake_dir=lake_dir, run_id=f"cli-{config.run_id}")
    # Ctrl-C or SIGTERM: the running tasks' containers go at once, not after the agents end.
    return run_pool(items, evaluate, config.parallel, on_result, on_abort=harness.abort)
