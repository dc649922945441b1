"""The bundled demo world (written by this project): GH Archive hours and, later, repos and PRs."""
