"""The tvm-buda version: part of every cache key and of every generated module's header."""

__version__ = "0.1.0"
