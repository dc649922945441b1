"""The shared SWE-bench instance files (relative to the `swebench_dir` fixture) that the export tests read."""

from __future__ import annotations

SWEBENCH_FILES = (
    "lite-dev/princeton-nlp-SWE-bench_Lite-dev.json",
    "lite-test-and-multilingual/swebench_lite_origin.jsonl",
    "lite-test-and-multilingual/swebench_multi.jsonl",
    "swe-agent-testdata/debug_20240322.json",
    "swe-agent-testdata/swe-bench-dev-easy.json",
    "swe-agent-testdata/swe-bench-dev-easy_first_only.json",
    "swe-agent-testdata/swe-bench-lite-test.json",
)
