"""One module per command of the command line (`reviewbot/cli.py` parses the arguments and
hands each command here), and what the reviewing commands share."""
