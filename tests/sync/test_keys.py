"""Object keys and row ids (agentfs.sync.replica): one is the other in another form, both
sort alike, and every origin owns a range no other origin's keys fall into."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentfs.sync.replica import ORIGIN_HEX, SEQ_BITS, key_of, new_origin, padding, row_id

ORIGINS = st.integers(0, (1 << (4 * ORIGIN_HEX)) - 1).map(lambda n: f"{n:0{ORIGIN_HEX}x}")
SEQS = st.integers(0, (1 << SEQ_BITS) - 1)
KEYS = st.builds(lambda origin, seq: f"{origin}/{seq:012d}", ORIGINS, SEQS)


@given(KEYS)
def test_a_key_and_its_row_id_are_one_another(key: str) -> None:
    row = row_id(key)
    assert -(1 << 63) <= row < (1 << 63)  # SQLite's signed 64-bit rowid
    assert key_of(row) == key


@given(KEYS, KEYS)
def test_keys_sort_as_their_row_ids(a: str, b: str) -> None:
    assert (a < b) == (row_id(a) < row_id(b))


@given(ORIGINS, ORIGINS, SEQS)
def test_an_origin_s_range_holds_only_its_own_keys(mine: str, other: str, seq: int) -> None:
    low, high = row_id(f"{mine}/0"), row_id(f"{mine}/{(1 << SEQ_BITS) - 1}")
    inside = low <= row_id(f"{other}/{seq:012d}") <= high
    assert inside == (mine == other)


def test_new_origins_have_the_width_keys_need() -> None:
    drawn = {new_origin() for _ in range(100)}
    assert len(drawn) == 100 and all(len(o) == ORIGIN_HEX and int(o, 16) >= 0 for o in drawn)


@given(st.integers(0, 3 << 20), st.sampled_from([1024, 4096, 8192, 65536]), st.integers(1, 16))
def test_padding_leaves_a_row_only_its_least_in_the_leaf(size: int, page: int, header: int) -> None:
    """SQLite's rule for a record of ``record`` bytes: over ``page - 35`` it keeps
    ``min_local + (record - min_local) % (page - 4)`` in its leaf page, or only ``min_local``
    when that would be over ``page - 35``. Padded objects keep only ``min_local``, whatever
    the record header and kind add (``header``); objects under a quarter page are not padded."""
    pad = padding(size, page)
    if size < page // 4:
        assert pad == 0
        return
    assert 0 <= pad < page
    max_local, min_local = page - 35, (page - 12) * 32 // 255 - 23
    record = size + pad + header
    assert record > max_local
    assert min_local + (record - min_local) % (page - 4) > max_local
