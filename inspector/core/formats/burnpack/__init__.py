"""Burnpack (``.bpk``), burn's own format: read its header, encode one as burn's writer does.

``spec`` holds the format's numbers, ``dtypes`` burn's dtype values, ``reader`` validates a file
against burn's reader (and stricter), ``encode`` writes the bytes before the data section, and
``facts`` keeps what only Burnpack has (param ids, scalars, burn's own dtype names).
"""

from .dtypes import describe as describe_burn_dtype
from .encode import BurnpackHead, NotBurnpackable, encode_burnpack_head
from .facts import BurnpackFacts, burnpack_facts
from .reader import read_burnpack
from .spec import FORMAT_NAME, SUFFIX

__all__ = [
    "FORMAT_NAME",
    "SUFFIX",
    "BurnpackFacts",
    "BurnpackHead",
    "NotBurnpackable",
    "burnpack_facts",
    "describe_burn_dtype",
    "encode_burnpack_head",
    "read_burnpack",
]
