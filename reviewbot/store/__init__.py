"""What reviewbot keeps on disk, for every stage: the folders it reads and writes, files
written whole (owner-only, renamed into place, never through a symlink), and the cache of
model results."""
