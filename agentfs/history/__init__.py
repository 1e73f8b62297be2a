"""History: versions of each path, copy-on-write snapshots, read tracking, and the hooks the
core calls at each change to keep them (``history.hooks``)."""
