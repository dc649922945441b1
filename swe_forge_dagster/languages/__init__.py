"""Language packs: one folder per language (`languages.python`, `languages.node`, `languages.go`, `languages.rust`,
`languages.java`, `languages.cpp`), each with its `pack.py` and private modules, and their registry.

Each pack (`languages.pack.LanguagePack`) holds what its language means to the pipeline; `languages.installed`
lists them and `languages.registry` answers every question the rest of the code asks about a language. This
package module imports nothing, so a pack-private module (`languages.python.runner`) can be imported without
loading every pack.
"""
