"""Text on its way out of the process, for every stage: secrets found and masked (the one
redaction pass), text from outside made safe to print, and counts in words."""
