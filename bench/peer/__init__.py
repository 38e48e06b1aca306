"""The peer bench (bench/peer_review.py): reviewbot and PR-Agent on the same labelled changes,
against the same OpenAI-compatible server behind a counting proxy, scored by one scorer."""
