"""SIGTERM and SIGINT become one ``Cancelled`` in the main thread; later signals, and
any signal once the write-up has started, are only noted."""

from __future__ import annotations

import signal

import pytest

from tusk.steps.run_claude.session.cancel import Cancelled, cancellable


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_raises_cancelled_naming_it(signum: signal.Signals) -> None:
    with cancellable() as cancel, pytest.raises(Cancelled) as stopped:
        signal.raise_signal(signum)
    assert stopped.value.signal_name == signum.name and cancel.received == [signum.name]


def test_a_second_signal_cannot_interrupt_the_write_up() -> None:
    with cancellable() as cancel:
        with pytest.raises(Cancelled):
            signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGTERM)  # what Actions sends 7.5 s after SIGINT
    assert cancel.received == ["SIGINT", "SIGTERM"]


def test_once_shielded_a_signal_is_only_noted() -> None:
    with cancellable() as cancel:
        cancel.shield()
        signal.raise_signal(signal.SIGTERM)
    assert cancel.requested and cancel.received == ["SIGTERM"]


def test_the_previous_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with cancellable():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before
