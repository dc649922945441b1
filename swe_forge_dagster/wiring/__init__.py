"""The wiring above the domain packages: what the lake's catalog shows, and which stores back the shared state.

Domain packages (`gharchive`, `candidates`, `llm`, `tasks`, ...) build on `lake` and `common`; the modules here
know all of them and put them together, so nothing low has to import something high. No Dagster here either:
the CLI, the assets and the tests use the same wiring.
"""
