"""Saving so that nothing is ever lost: every output appears whole, or not at all.

::

    writer.AtomicWriter      reserve destinations, refuse odd ones, one temp per output
      pending_file           a locked temp beside its destination (fsync'd before publish)
      writeback              data written on a second thread while the cast reads on
    writer.commit            fsync, then every rename at once:
      journal.Transaction      a journal per folder, so a SIGKILL mid-commit is finished
                               (or undone) by the next save into that folder, never by a read
    output_names             what a converted pickle is called (Hugging Face's names)
"""
