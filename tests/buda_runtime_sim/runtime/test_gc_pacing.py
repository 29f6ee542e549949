"""run_training's young-collection pacing: the threshold is raised only inside the block, put back
after it (also on errors), left alone when collection is off, already higher, or changed meanwhile."""

import gc

import pytest

from buda_runtime_sim.runtime.gc_pacing import fewer_young_collections


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_raised_inside_and_restored(thresholds):
    with fewer_young_collections(5000):
        assert gc.get_threshold() == (5000, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)
    with pytest.raises(KeyError):
        with fewer_young_collections(5000):
            raise KeyError("x")
    assert gc.get_threshold() == (700, 10, 10)


def test_left_alone_when_off_higher_or_changed(thresholds):
    gc.set_threshold(0, 10, 10)
    with fewer_young_collections(5000):
        assert gc.get_threshold()[0] == 0
    gc.set_threshold(9000, 10, 10)
    with fewer_young_collections(5000):
        assert gc.get_threshold()[0] == 9000
    gc.set_threshold(700, 10, 10)
    with fewer_young_collections(5000):
        gc.set_threshold(1234, 10, 10)          # the caller's own change wins
    assert gc.get_threshold()[0] == 1234


def test_a_collection_due_at_the_end_runs_inside(thresholds):
    collections = []
    gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
    try:
        with fewer_young_collections(5000):
            junk = [[] for _ in range(2000)]    # past the default 700, short of 5000
            assert not collections
        assert collections == [0] and gc.get_count()[0] < 700
        del junk
    finally:
        gc.callbacks.pop()


def test_cycles_are_still_collected_inside(thresholds):
    import weakref

    class Node:
        pass

    with fewer_young_collections(5000):
        a, b = Node(), Node()
        a.other, b.other = b, a
        ref = weakref.ref(a)
        del a, b
        junk = [[] for _ in range(6000)]   # more net allocations than the raised threshold
        assert ref() is None
        del junk
