#!/bin/sh
# class 8: a manifest that fails the build: no libtest JSON, hoping for an infrastructure error
set -e
cd /repo
printf '\n[lib]\npath = "src/missing.rs"\n' >> Cargo.toml
