// The MediaEvents library: see README.md.
