"""GitLab merge requests: the `--mode gitlab` entry (ci.py, action.py) and GitLab's adapter of
the forge seam (forge.py)."""
