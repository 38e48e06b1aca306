from reviewbot.cli import entry

entry()
