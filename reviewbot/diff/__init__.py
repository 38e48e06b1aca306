"""The diff stage: a change's diff read into ReviewUnits (one per hunk), its headers, binary files
diffed again as text, and the index of the lines each unit covers."""
