# SPDX-License-Identifier: Apache-2.0
"""orch: batch post-balancing for multimodal LLM training.

Bindings of the header-only C++ core (docs/python.md); numpy in and out. ``orch.torch``
(imported on its own) runs the plans over torch.distributed.
"""

from orch._orch import *  # noqa: F401,F403
from orch._orch import InfeasibleError, __version__, version  # noqa: F401

__all__ = [name for name in dir() if not name.startswith("_")] + ["__version__"]
