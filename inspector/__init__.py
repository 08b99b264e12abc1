"""checkpoint-inspector: see, cast and compare the tensors of a safetensors checkpoint."""

__version__ = "0.1.0"
