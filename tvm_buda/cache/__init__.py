"""The TVM cache: compiled models stored on disk so a warm start skips tracing and TVM."""

from .compile_cached import CachePolicy, compile_with_cache, default_cache_dir
from .store import InvalidEntry, list_entries, read_entry, remove_entry

__all__ = ["CachePolicy", "InvalidEntry", "compile_with_cache", "default_cache_dir", "list_entries", "read_entry",
           "remove_entry"]
