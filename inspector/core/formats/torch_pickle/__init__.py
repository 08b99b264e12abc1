"""PyTorch pickles (``torch.save``: zip, legacy, raw), read without executing anything.

``machine`` interprets opcodes against ``allowlist``; ``archive``/``containers`` read the zip,
legacy and tar layouts as torch does; ``names`` places tensors in their storages; ``reader``
makes a :class:`~inspector.core.layout.Header`. What others use is exported here.
"""

from .allowlist import ImportVerdict
from .archive import LEGACY_MAGIC, MAX_PICKLE_BYTES, PickleFormat, open_zip, read_member
from .archive import _why as error_summary
from .containers import fold, is_torch_tar, is_torchscript, tar_pickles, zip_problems
from .machine import AmbiguousPickle, PickleError, PickleMachine
from .opcodes import OPS as OPCODES
from .policies import ImportSeen, ScanPolicy
from .reader import (
    FORMAT_NAME,
    PICKLE_SUFFIXES,
    PickleFacts,
    looks_like_pickle,
    pickle_facts,
    read_pickle_checkpoint,
    refuse_polyglot,
)

__all__ = [
    "FORMAT_NAME",
    "LEGACY_MAGIC",
    "MAX_PICKLE_BYTES",
    "OPCODES",
    "PICKLE_SUFFIXES",
    "AmbiguousPickle",
    "ImportSeen",
    "ImportVerdict",
    "PickleError",
    "PickleFacts",
    "PickleFormat",
    "PickleMachine",
    "ScanPolicy",
    "error_summary",
    "fold",
    "is_torch_tar",
    "is_torchscript",
    "looks_like_pickle",
    "open_zip",
    "pickle_facts",
    "read_member",
    "read_pickle_checkpoint",
    "refuse_polyglot",
    "tar_pickles",
    "zip_problems",
]
