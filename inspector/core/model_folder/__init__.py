"""Hugging Face model folders: the config's dtype, tensors kept in F32 on purpose, the files a
loadable copy needs, and a lint of the whole folder."""
