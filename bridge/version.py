"""The version of nhbridge, written into every generated file (no imports: any stage may import it)."""

__version__ = "0.1.0"
