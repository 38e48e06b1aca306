"""reviewbot: a code-review bot for git changes that is useful with no network."""

__version__ = "0.1.0"
