"""What a run says while it works, for every stage: typed events from one emitter, and the
terminal's display of them."""
