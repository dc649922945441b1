"""Forgers written by a red-team helper (2026-11-30) against twins that change a test's data
(`languages.python.assertion_sites`, `languages.python.twin_values`): each module is a task (TESTS, the FAIL_TO_PASS
ids F2P, the BROKEN code and the FIXED one) and a FORGER, code under test that reads its caller's frame and returns
the value expected only when it believes the run is not a twin's. `tests/test_data_forgers.py` judges them with real
pytest (`common.judge`); `fp1_fixture_reads_param` is an honest fix that a twin once called tampering."""
