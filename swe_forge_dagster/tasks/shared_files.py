"""Stage results, exported tasks and the dataset on the shared store, when `SWE_FORGE_HOME` is one.

A task's stages read and write its work folder and export folder on local disk (agents append to transcripts,
stages replace JSON files, the export writes a directory), which an object store cannot do in place. So with a
store home, the local folders are a working copy: before a stage the task's folders are made equal to the
store's copy (another machine, or another run container, may have run the stage before), and after it —
failed or not — the store's copy is made equal to the local one. Nothing a finished stage wrote is then lost
when its container or machine goes away, and any machine can run the next stage. With a local home these
are no-ops: the local folders are the only copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.common.store import StorePath, pull_subtrees, pull_tree, push_tree


@dataclass(frozen=True)
class SharedTaskFiles:
    work_root: Path
    output_dir: Path
    dataset_dir: Path
    store_work: StorePath | None = None
    store_tasks: StorePath | None = None
    store_datasets: StorePath | None = None

    @classmethod
    def of(cls, layout: HomeLayout, output_dir: Path) -> SharedTaskFiles:
        """The local folders of `layout` (exports in `output_dir`) and, for a store home, their store copies."""
        return cls(
            layout.work,
            output_dir,
            layout.datasets,
            layout.on_store("work"),
            layout.on_store("tasks"),
            layout.on_store("datasets"),
        )

    def pull(self, task_id: str) -> int:
        """The task's work and export folders as the store has them; files changed."""
        changed = 0
        if self.store_work is not None:
            changed += pull_tree(self.store_work / task_id, self.work_root / task_id)
        if self.store_tasks is not None:
            changed += pull_tree(self.store_tasks / task_id, self.output_dir / task_id)
        return changed

    def push(self, task_id: str) -> int:
        """The store's copy of the task's work and export folders made equal to the local ones; objects changed."""
        changed = 0
        if self.store_work is not None:
            changed += push_tree(self.work_root / task_id, self.store_work / task_id)
        if self.store_tasks is not None:
            changed += push_tree(self.output_dir / task_id, self.store_tasks / task_id)
        return changed

    def export_dir(self, task_id: str, recorded: str | None) -> Path | None:
        """The task's exported directory on this machine. With a store home the store's copy is pulled first,
        always: another machine may have exported the task again since this one did, and a local copy would be
        stale. Otherwise (or when the store has none) the recorded directory when it exists here; None when
        neither has it."""
        if self.store_tasks is not None:
            pull_tree(self.store_tasks / task_id, self.output_dir / task_id)
            if (local := self.output_dir / task_id).is_dir():
                return local
        if recorded and Path(recorded).is_dir():
            return Path(recorded)
        local = self.output_dir / task_id
        return local if local.is_dir() else None

    def pull_exports(self) -> int:
        """Every exported task the store has, each folder swapped in whole (the dataset is built from all of
        them); local ones the store does not have are kept."""
        return pull_subtrees(self.store_tasks, self.output_dir) if self.store_tasks is not None else 0

    def push_datasets(self) -> int:
        return push_tree(self.dataset_dir, self.store_datasets) if self.store_datasets is not None else 0
