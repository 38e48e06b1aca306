"""The repository under review: git, the one reader of its files, and what pre-commit asks to
review."""
