"""Typed data that crosses stage boundaries (docs/ARCHITECTURE.md "Data contracts", seed 004),
one module per stage's contract; import each record from its module.

Every stage artifact is the JSON serialisation of one of these records and loads
back into it, so any stage can be replayed from the artifact of the one before.
Records are frozen: a stage returns new objects rather than editing its input.

They are msgspec Structs, not pydantic models: our own stages build them, so they need no
validation when built, and defining ~45 pydantic models (with pydantic's import) cost the
pre-commit hook ~0.12 s of its ~0.5 s. Data that comes back from outside (a cached result, an
artifact) is decoded with `from_data`/`from_json`, which checks types, literals and bounds
and refuses unknown keys. What a *model* answers is validated by pydantic models at the
model boundary (`reviewbot/plan/reply.py`, `reviewbot/review/replies.py`), which also give
the model its JSON schema; they convert into these records.
"""
