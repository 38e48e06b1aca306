"""The planning stage: the repository's indexes, the planner (model or heuristic), the planner's
reply model, and fusion of the rules' plan with the planner's."""
