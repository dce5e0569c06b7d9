"""The export of many logins' data to datasets on disk, on one machine or a cluster
(docs/export.md). The public names are ``bf.export``, ``bf.aexport``, ``bf.ExportReport`` and
``bf.schema``; the command is ``bankfeed export``."""
