"""The GDB remote protocol's framing (mcusim.gdb.packets) over a socket pair: checksums and
acknowledgements, escapes both ways, Ctrl-C outside packets, garbage skipped, a corrupt packet
asked for again, and the server's answers to packets gdb never sends correctly."""
import socket

import pytest

from mcusim.gdb.packets import INTERRUPT, Connection, checksum, escape, frame, unescape
from mcusim.gdb.server import parse_address


@pytest.fixture
def pair():
    ours, theirs = socket.socketpair()
    theirs.settimeout(5)
    yield Connection(ours), theirs
    ours.close()
    theirs.close()


def test_frame_escapes_and_checksums():
    assert frame(b"OK") == b"$OK#9a"
    assert escape(b"a#b$c}d*") == b"a}\x03b}\x04c}]d}\x0a"
    assert unescape(escape(bytes(range(256)))) == bytes(range(256))
    assert checksum(b"") == 0


def test_reads_packets_acks_them_and_skips_what_is_not_one(pair):
    conn, gdb = pair
    gdb.sendall(b"+junk$qC#b4\x03$X0,2:}]}\x03#" + b"%02x" % checksum(b"X0,2:}]}\x03"))
    assert conn.read() == b"qC"
    assert conn.read() == INTERRUPT
    assert conn.read() == b"X0,2:}#"
    assert gdb.recv(2) == b"++"


def test_a_corrupt_packet_is_refused_and_gdb_sends_it_again(pair):
    conn, gdb = pair
    gdb.sendall(b"$qC#00$qC#b4")
    assert conn.read() == b"qC"
    assert gdb.recv(2) == b"-+"


def test_no_ack_mode_and_resend_on_nak(pair):
    conn, gdb = pair
    conn.send("OK")
    assert gdb.recv(16) == b"$OK#9a"
    gdb.sendall(b"-$g#67")  # our last packet was lost: sent again before the next is read
    conn.acks = False
    assert conn.read() == b"g"
    assert gdb.recv(16) == b"$OK#9a"  # (and no '+': acknowledgements are off)


def test_end_of_file_and_interrupt_polling(pair):
    """While the target runs: Ctrl-C found behind a stray acknowledgement or a packet (which stays
    for read()), a wait that ends when the run does (the wake descriptor), end of file."""
    import os
    import time

    conn, gdb = pair
    assert conn.poll_interrupt(timeout=0.01) is False
    gdb.sendall(b"+$qC#b4\x03")
    assert conn.poll_interrupt(timeout=1) is True
    began = time.perf_counter()
    assert conn.poll_interrupt(timeout=0.2) is False and time.perf_counter() - began >= 0.15  # waits, no spin
    wake_read, wake_write = os.pipe()
    os.write(wake_write, b"x")
    assert conn.poll_interrupt(wake_read) is False  # the run ended: returns at once
    os.close(wake_read)
    os.close(wake_write)
    assert conn.read() == b"qC"
    gdb.close()
    assert conn.poll_interrupt(timeout=1) is None and conn.read() is None


def test_a_closed_peer_is_noted_not_raised(pair):
    """Acknowledging a packet gdb sent before it closed: no broken-pipe error escapes."""
    conn, gdb = pair
    gdb.sendall(b"$g#67$g#67")
    gdb.close()
    assert conn.read() == b"g"
    conn.send("OK")
    assert conn.read() in (b"g", None)


@pytest.mark.parametrize("text, expected", [("3333", ("127.0.0.1", 3333)), (":0", ("127.0.0.1", 0)),
                                            ("0.0.0.0:2331", ("0.0.0.0", 2331)), ("[::1]:5000", ("::1", 5000))])
def test_gdb_addresses(text, expected):
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["", "host", "host:", "1:99999", "localhost:-1", "０３４３７"])
def test_bad_gdb_addresses(text):
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_address(text)
