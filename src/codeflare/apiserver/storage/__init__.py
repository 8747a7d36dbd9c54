"""Where objects live: one SQLite file (WAL) with monotonic resourceVersions and a change feed.

The store keeps the current version of every object, a bounded history of changes for watch
resumption, and notifies subscribers of each committed change. It knows nothing about kinds,
validation or HTTP; the registry decides what to write.
"""
