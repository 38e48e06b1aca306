"""Delivery to GitHub: `reviewbot --mode github` in a workflow (action.yml), reviewing the
pull request of the event, and posting the review with PyGithub (imported only here)."""
