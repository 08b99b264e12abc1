"""Per-thread scratch buffers: views are reused, and follow their slot when it grows."""

from __future__ import annotations

import threading
import uuid

import numpy as np

from inspector.core.cast.scratch import scratch


def test_a_slot_gives_the_same_memory_for_the_same_request():
    a = scratch("test.same", 1000, np.uint32)
    b = scratch("test.same", 1000, np.uint32)
    assert np.shares_memory(a, b) and (a.size, a.dtype) == (1000, np.uint32)
    c = scratch("test.same", 500, np.float32)  # another view of the same slot
    assert np.shares_memory(a, c) and (c.size, c.dtype) == (500, np.float32)


def test_a_grown_slot_hands_out_views_of_its_new_buffer_only():
    slot = f"test.grow.{uuid.uuid4()}"  # slots live as long as their thread: a run in the same
    small = scratch(slot, 100, np.uint8)  # process (mutmut's stats, then its clean run) found
    big = scratch(slot, 1 << 20, np.uint8)  # "test.grow" already grown
    again = scratch(slot, 100, np.uint8)
    assert np.shares_memory(again, big) and not np.shares_memory(again, small)


def test_many_odd_sizes_still_give_correct_views():
    for n in range(1, 300):
        v = scratch("test.odd", n, np.uint16)
        assert v.size == n and v.dtype == np.uint16
    assert np.shares_memory(scratch("test.odd", 7, np.uint16), scratch("test.odd", 299, np.uint16))


def test_threads_never_share_a_slot():
    got = {}

    def take(name: str) -> None:
        got[name] = scratch("test.thread", 64, np.uint32)

    threads = [threading.Thread(target=take, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not np.shares_memory(got["a"], got["b"])
