"""Which format reads a file: every plug-in claims it or not, the strongest claim reads it.

Claims of equal strength are tried in the order of :data:`FORMATS`, and the next one gets its
turn when one refuses; when all refuse, the last refusal is the one a person sees (the most
specific: a pickle-looking file is refused as a pickle, anything else as safetensors, whose
reader names foreign files). A file one format read is then offered to every other format's
polyglot check, so no loader could take the same bytes for something else.
"""

from __future__ import annotations

from ..errors import CheckpointError
from ..layout import Header
from ..regular_file import open_regular
from .burnpack.plugin import BURNPACK
from .gguf.plugin import GGUF
from .protocol import Claim, FileFormat
from .safetensors.plugin import SAFETENSORS
from .torch_pickle.plugin import TORCH_PICKLE

FORMATS: tuple[FileFormat, ...] = (SAFETENSORS, TORCH_PICKLE, BURNPACK, GGUF)


def read_file(path: str) -> Header:
    """One file's tensors, read by the format that claims it most strongly."""
    try:
        with open_regular(path) as f:
            head = f.read(512)
            claims = []
            for fmt in FORMATS:
                f.seek(0)
                claims.append((fmt.claim(path, head, f), fmt))
    except OSError:
        claims = [(Claim.MAYBE, SAFETENSORS)]  # its reader says what went wrong
    best = max(c for c, _ in claims)
    if best is Claim.NO:
        best = Claim.MAYBE
        claims = [(Claim.MAYBE, SAFETENSORS)]  # says what the file is instead
    tried = [fmt for c, fmt in claims if c is best]
    for i, fmt in enumerate(tried):
        try:
            header = fmt.read(path)
        except CheckpointError:
            if i == len(tried) - 1:
                raise
            continue
        for other in FORMATS:
            if other is not fmt:
                other.refuse_if_also_mine(path)
        return header
    raise AssertionError("unreachable: a claim was made")
