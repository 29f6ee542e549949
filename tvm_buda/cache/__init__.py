"""The TVM cache: compiled models stored on disk as TT device images, so a warm start skips
tracing and TVM."""

from .compile_cached import CachePolicy, compile_with_cache, default_cache_dir
from .entries import InvalidEntry, entry_path, list_entries, open_entry, remove_entry

__all__ = ["CachePolicy", "InvalidEntry", "compile_with_cache", "default_cache_dir", "entry_path", "list_entries",
           "open_entry", "remove_entry"]
