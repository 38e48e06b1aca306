"""Steps 7 and 8: a model reviews the code of every unit the plan keeps (`stage.review_units`);
the verifier anchors what it found to the diff, merges duplicates and attaches checked fix
suggestions (`stage.verify_findings`).

The package itself imports nothing: an offline run never loads the agent, its tools or the
model layer.
"""
