"""Quantized checkpoints: which tensors are codes of which weight, and their values.

    config.json quantization_config ─┐
    tensor names, dtypes, shapes ────┴─ recognise ─► QuantLayout (one QuantizedWeight per
                                                     logical weight, its companions, problems)
    QuantizedWeight ─ rows.prepare (reads companions, checks shapes) ─► DequantPlan
    DequantPlan ─ rows.chunks (codes read a block of rows at a time) ─ kernels ─► values

The cast (``cast/job.py``) asks ``of_checkpoint.quant_layout`` and either dequantizes every
quantized weight exactly or refuses with the layout's one-line reason.
"""
