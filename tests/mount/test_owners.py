"""``IdSwap``: the mount for a sandboxed command exchanges the workspace owner's ids with the
command's user's. The exchange must be its own inverse (what is shown, stored again, is what
was stored), must never map two ids to one, and must leave every other id alone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfs.mount.owners import NO_SWAP, IdSwap

ids = st.integers(min_value=0, max_value=2**32 - 2)


@given(ids, ids, ids, ids, st.lists(ids, max_size=20))
def test_a_swap_is_its_own_inverse_and_one_to_one(
    owner: int, shown: int, group: int, shown_group: int, others: list[int]
) -> None:
    swap = IdSwap((owner, shown), (group, shown_group))
    assert swap.uid(owner) == shown and swap.gid(group) == shown_group
    for value in [owner, shown, group, shown_group, *others]:
        assert swap.uid(swap.uid(value)) == value and swap.gid(swap.gid(value)) == value
        if value not in (owner, shown):
            assert swap.uid(value) == value
    values = {owner, shown, *others}
    assert len({swap.uid(v) for v in values}) == len(values)


@given(ids, ids, ids, ids)
def test_the_command_line_form_round_trips(a: int, b: int, c: int, d: int) -> None:
    swap = IdSwap((a, b), (c, d))
    assert IdSwap.parse(str(swap)) == swap


def test_unchanged_ids_and_bad_forms() -> None:
    assert NO_SWAP.uid(0) == 0 and NO_SWAP.gid(1000) == 1000 and NO_SWAP.uid(-1) == -1
    assert IdSwap.parse("0:0=65534:65534").uid(-1) == -1  # "leave the owner as it is" stays
    for bad in ("0:0", "0=1", "a:b=c:d", "0:0=1:1=2:2", "-1:0=1:1", ""):
        with pytest.raises(ValueError):
            IdSwap.parse(bad)
