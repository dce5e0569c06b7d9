"""The notebook axis: bankfeed in a real Jupyter kernel, driven through nbclient as a notebook user
drives it: the challenge forms, the connection widget and the rich views (docs/notebooks.md)."""
