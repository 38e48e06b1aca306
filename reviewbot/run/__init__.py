"""The conductor, above the stages it runs: the pipeline that runs them in order, and the
run's folder with each stage's artifact. Nothing below imports it."""
