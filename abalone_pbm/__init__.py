"""abalone-pbm: a play-by-email Abalone server for 2 to 6 players."""

__version__ = "0.1.0"
