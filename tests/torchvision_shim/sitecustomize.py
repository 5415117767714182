"""Test-only: lets torchvision 0.28's pure-Python models import against torch 2.13.0+cpu.

torchvision's compiled extension is built for another torch, so its operators (torchvision::nms,
...) are never registered, and torchvision/_meta_registrations.py fails at import registering fake
kernels for them. The classification models never call those operators, so an empty module stands
in for _meta_registrations. Python imports this file at startup when this folder is on PYTHONPATH
(the tests that verify torchvision models put it there, for the verify child too); nothing else
uses it, and kpredict itself never does.
"""

import sys
import types

sys.modules.setdefault("torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations"))
