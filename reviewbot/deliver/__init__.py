"""Delivery to a forge, whatever the forge: which findings to post and where, comment bodies and
their markers, fingerprints, dismissals, commands, the conversation, what an incremental run
remembers, and the small interface a forge implements (forge.py)."""
