"""`from libs import tt_lib`: the TT-Dispatch spelling of `import tt_lib` (same module object)."""

import sys

import tt_lib as _tt_lib

sys.modules[__name__] = _tt_lib
