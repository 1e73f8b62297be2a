"""The FUSE mount: a workspace as a real directory tree for git, pip, pytest and a shell
(docs/mount.md). ``operations`` answers the kernel's requests through the core, ``files`` holds
what open files have written, ``daemon`` mounts, serves and unmounts. pyfuse3 is imported by
those modules only, so the rest of agentfs works without it.
"""
