"""The request loop's quicker waits (agentfs.mount.loop), on a pipe instead of /dev/fuse."""

from __future__ import annotations

import os

import pyfuse3
import trio

from agentfs.mount import loop


def test_a_waiting_request_is_taken_without_a_scheduler_pass_and_an_empty_fd_waits() -> None:
    read_end, write_end = os.pipe()
    waiter = loop._Waiter()
    passes: list[str] = []

    async def other_task() -> None:  # runs only when the waiter yields to trio
        passes.append("other task ran")

    async def write_later() -> None:
        os.write(write_end, b"y")

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            os.write(write_end, b"x")
            nursery.start_soon(other_task)
            await waiter.wait_readable(read_end)  # readable: no yield
            assert passes == []
            os.read(read_end, 1)
            nursery.start_soon(write_later)  # runs only once the waiter yields
            with trio.fail_after(5):
                await waiter.wait_readable(read_end)  # empty: trio's way, others run
            assert "other task ran" in passes

    try:
        trio.run(main)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_every_so_often_the_wait_yields_even_with_requests_queued() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"x")
    waiter = loop._Waiter()
    ticks: list[int] = []

    async def ticker() -> None:
        ticks.append(1)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ticker)
            for _ in range(loop.YIELD_EVERY - 1):
                await waiter.wait_readable(read_end)
            assert ticks == []  # no pass through trio yet: the ticker could not run
            # the next wait goes through trio; trio may resume this task in the same batch
            # as the ticker, before it, so it is certain only by the pass after
            for _ in range(loop.YIELD_EVERY + 1):
                await waiter.wait_readable(read_end)
            assert ticks == [1]  # the timer task got its turn

    try:
        trio.run(main)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_free_lock_is_taken_without_yielding_and_a_held_one_waits() -> None:
    order: list[str] = []

    async def main() -> None:
        lock = loop._Lock()
        async with trio.open_nursery() as nursery:

            async def second() -> None:
                async with lock:
                    order.append("second")

            async with lock:
                nursery.start_soon(second)
                await trio.sleep(0.01)  # second waits for the lock meanwhile
                order.append("first")
        assert order == ["first", "second"]

    trio.run(main)


def test_a_contended_lock_goes_to_its_waiters_in_order_and_skips_a_cancelled_one() -> None:
    order: list[str] = []

    async def main() -> None:
        lock = loop._Lock()
        async with trio.open_nursery() as nursery:

            async def waiter(name: str, scope: trio.CancelScope | None = None) -> None:
                with scope or trio.CancelScope():
                    async with lock:
                        order.append(name)
                        await trio.sleep(0.001)  # held across a yield: the others queue

            cancelled = trio.CancelScope()
            async with lock:
                for name in ("a", "b", "c"):
                    nursery.start_soon(waiter, name, cancelled if name == "b" else None)
                    await trio.sleep(0.005)  # each queues in this order
                cancelled.cancel()
                await trio.sleep(0.005)  # b leaves the queue while the lock is still held
                order.append("holder")
        assert order == ["holder", "a", "c"]
        async with lock:  # free again: nobody holds or waits
            order.append("after")
        assert order[-1] == "after"

    trio.run(main)


def test_a_waiter_cancelled_as_it_is_handed_the_lock_hands_it_on() -> None:
    order: list[str] = []

    async def main() -> None:
        lock = loop._Lock()
        with trio.fail_after(5):  # a lock that is never handed on fails, not hangs
            await handed_on(lock)
        async with lock:
            order.append("after")
        assert order == ["b", "after"]

    async def handed_on(lock: loop._Lock) -> None:
        async with trio.open_nursery() as nursery:
            first = trio.CancelScope()

            async def waiter(name: str, scope: trio.CancelScope) -> None:
                with scope:
                    async with lock:
                        order.append(name)

            await lock.__aenter__()
            nursery.start_soon(waiter, "a", first)
            nursery.start_soon(waiter, "b", trio.CancelScope())
            await trio.sleep(0.005)  # both queue (in either order: trio may run b first)
            first.cancel()  # a's wait is cancelled at once, but a has not run yet ...
            await lock.__aexit__(None, None, None)  # ... when the lock is handed to a (if
            # first in line): a must pass it on to b
        assert order == ["b"]

    trio.run(main)


def test_install_gives_pyfuse3_the_quicker_waits_once() -> None:
    loop.install()
    first = pyfuse3.trio  # type: ignore[attr-defined]
    loop.install()
    assert pyfuse3.trio is first  # type: ignore[attr-defined]
    assert first.Lock is loop._Lock
    assert first.lowlevel.current_task is trio.lowlevel.current_task  # the rest is trio's
