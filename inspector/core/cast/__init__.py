"""The cast pipeline: a checkpoint in, a copy with its float tensors cast out.

A cast walks down this list and never back up::

    job.plan_cast          which tensors change, to what (floats only; ints and bools kept)
    job.cast_checkpoint    the job: per output file, per tensor, per chunk ─┐
      stream.SourceReader    source chunks from the mmap (or byte ranges) ◄─┘
      pool.ChunkCaster       chunks on threads, or ranges on worker processes
        chunk.cast_chunk       one chunk: kernels + precision, in order
          kernels              bit-exact torch ``Tensor.to`` (narrow_float for F32 → 16/8 bit)
          precision            what the cast lost, measured while casting
        worker                 a worker process: read a range, cast, pwrite in place
      stream.OutputBatch     finished chunks handed to save/ (writeback thread)
    job.CastReport         per-tensor errors, totals, JSON

Worker processes: ``worker_policy`` decides how many (without numpy), ``worker_boot`` starts
them (early, before numpy loads), ``parent_watch`` ends them when their parent dies. Bytes
reach disk only through :mod:`inspector.core.save`.
"""
