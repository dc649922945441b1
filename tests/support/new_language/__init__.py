"""A language the product does not ship, added the way `docs/adding-a-language.md` says: the throwaway pack's
module (`ruby_pack.py`, copied into a temporary folder and installed there as a plugin distribution) and a small
real repository written in it (`ruby_repo.py`)."""
