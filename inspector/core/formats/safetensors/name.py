"""The name headers read by this format carry (``Header.format``)."""

FORMAT_NAME = "safetensors"
