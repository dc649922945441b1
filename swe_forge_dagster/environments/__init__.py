"""A repository's environment, built from what the language packs answer: the ladder of candidate recipes
(`candidates`), seed tasks' images and installs (`seed`), toolchain images built on first need
(`toolchain_images`) and the installed, cached environment image (`environment`).

It sits above the kernel (`execution`, which knows no language) and the packs (`languages`), and below the
stages that use it (`tasks`, `harness`, `export`).
"""
