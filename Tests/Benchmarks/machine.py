"""The QEMU machine the benchmarks in this folder run on: scripts/vm/ (vmlib.py,
build-assets.sh, the guest's files), which scripts/run.sh boots for its
demo too. Importing this module puts that folder on sys.path, the one
place in this folder that does:

    import machine  # noqa: F401  (scripts/vm on sys.path)
    from vmlib import REPO, VM
"""
import os
import sys

# This file is Tests/Benchmarks/machine.py.
FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts", "vm")
if FOLDER not in sys.path:
    sys.path.insert(0, FOLDER)
