"""reviewbot: a code-review bot for git changes that is useful with no network."""

import os

__version__ = "0.1.0"

# pydantic (model replies only) looks for plugins in every installed distribution's metadata
# at its first model (~20 ms); reviewbot uses none. A user's own setting wins.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
