"""Parameter sweeps of a system's FMU on Dask (``nhbridge sweep``).

:mod:`.spec` what is swept, :mod:`.record` what is recorded, :mod:`.engine` the cases on the workers, :mod:`.results`
the table and plot.
"""
