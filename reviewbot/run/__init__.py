"""The run itself: the pipeline that drives the stages, its artifacts, cache, events, progress,
child processes, the folders it writes, the one redaction pass, and `reviewbot explain`."""
