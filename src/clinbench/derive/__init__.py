"""The derivation benchmark: task catalogue, skills, workspaces, schema variants, scorer, lint."""
