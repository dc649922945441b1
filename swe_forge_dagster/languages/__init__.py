"""Language packs: one module per language (`python`, `node`, `go`, `rust`, `java`, `cpp`) and their registry.

Each pack (`pack.LanguagePack`) holds what its language means to the pipeline; `registry` lists them
and answers every question the rest of the code asks about a language. This package module imports
nothing, so a pack-private module (`python_runner`) can be imported without loading every pack.
"""
