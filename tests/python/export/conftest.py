"""The export axis: data moved out in bulk. ``bf.export`` and ``bankfeed export`` on one machine
and on a Dask cluster, ``bankfeed.spark``, the dlt source, clients sent to Dask workers, and the
connection pool that copies of one client share in one process (docs/export.md,
docs/scale-out.md, docs/dlt.md)."""
