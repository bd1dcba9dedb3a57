"""GDB remote serial protocol framing: `$payload#checksum`, acknowledgements (until no-ack mode),
`}` escapes and the out-of-band Ctrl-C byte (GDB manual, "Remote Protocol": Overview)."""
from __future__ import annotations

import select
import socket

INTERRUPT = b"\x03"    # Ctrl-C from gdb, outside any packet
MAX_PACKET = 0x4000    # the PacketSize this server announces (qSupported), in bytes
_ESCAPED = b"#$}*"


def checksum(data: bytes) -> int:
    return sum(data) & 0xFF


def escape(payload: bytes) -> bytes:
    out = bytearray()
    for byte in payload:
        if byte in _ESCAPED:
            out += bytes((0x7D, byte ^ 0x20))
        else:
            out.append(byte)
    return bytes(out)


def unescape(body: bytes) -> bytes:
    out, escaped = bytearray(), False
    for byte in body:
        if escaped:
            out.append(byte ^ 0x20)
            escaped = False
        elif byte == 0x7D:
            escaped = True
        else:
            out.append(byte)
    return bytes(out)


def frame(payload: bytes) -> bytes:
    body = escape(payload)
    return b"$" + body + b"#" + b"%02x" % checksum(body)


class Connection:
    """One gdb connection. read() gives whole packets (or INTERRUPT), acknowledging each; a
    corrupt one is answered with `-` (gdb sends it again) and garbage between packets is skipped."""

    def __init__(self, sock: socket.socket, log=None, give_up=None):
        self.sock = sock
        self.give_up = give_up or (lambda: False)  # read() returns None once this is true (an interrupt)
        self.buffer = bytearray()
        self.acks = True
        self.log = log or (lambda message: None)
        self.last_sent = b""
        self.closed = False

    def _fill(self, timeout: float | None = None) -> bool:
        """Read what has arrived; False on end of file (or when nothing came within `timeout`)."""
        try:
            if timeout is not None and not select.select([self.sock], [], [], timeout)[0]:
                return False
        except (OSError, ValueError):
            self.closed = True
            return False
        try:
            data = self.sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return False
        self.buffer += data
        return True

    def read(self) -> bytes | None:
        """The next packet's payload, INTERRUPT, or None once gdb has gone."""
        while True:
            packet = self._take()
            if packet is not None:
                return packet
            if self.closed or self.give_up():
                return None
            self._fill(0.1)

    def poll_interrupt(self, wake: int | None = None, timeout: float | None = None) -> bool | None:
        """While the target runs: True on Ctrl-C, None when gdb disconnected, else False once
        `wake` (a descriptor: the run ended) is readable or `timeout` passed. Acknowledgements
        are dropped; anything else stays for read()."""
        while self.buffer[:1] in (b"+", b"-"):
            del self.buffer[:1]
        at = self.buffer.find(INTERRUPT)
        if at >= 0:
            del self.buffer[at]
            return True
        waiting = [self.sock] + ([wake] if wake is not None else [])
        try:
            ready = select.select(waiting, [], [], timeout)[0]
        except (OSError, ValueError):
            return None
        if self.sock in ready:
            if not self._fill(0):
                return None if self.closed else False
            return self.poll_interrupt(wake, 0)
        return False

    def _take(self) -> bytes | None:
        buf = self.buffer
        while buf:
            lead = buf[0]
            if lead == ord("+"):
                del buf[:1]
            elif lead == ord("-"):  # gdb did not get our last packet intact
                del buf[:1]
                if self.last_sent:
                    self._put(self.last_sent)
            elif buf[:1] == INTERRUPT:
                del buf[:1]
                return INTERRUPT
            elif lead == ord("$"):
                end = buf.find(b"#")
                if end < 0 or len(buf) < end + 3:
                    if len(buf) > 2 * MAX_PACKET + 4:  # no end in sight: not a packet
                        self.log("dropped an over-long packet with no end")
                        buf.clear()
                    return None
                body, given = bytes(buf[1:end]), bytes(buf[end + 1:end + 3])
                del buf[:end + 3]
                try:
                    valid = int(given, 16) == checksum(body)
                except ValueError:
                    valid = False
                if not valid and self.acks:
                    self.log(f"bad checksum on {body[:40]!r}: asked gdb to send it again")
                    self._put(b"-")
                    continue
                if self.acks:
                    self._put(b"+")
                return unescape(body)
            else:  # between packets: skip up to the next one
                start = min((i for i in (buf.find(b"$"), buf.find(b"+"), buf.find(b"-"), buf.find(INTERRUPT))
                             if i >= 0), default=len(buf))
                self.log(f"skipped {start} byte(s) outside any packet")
                del buf[:max(start, 1)]
        return None

    def send(self, payload: bytes | str) -> None:
        if isinstance(payload, str):
            payload = payload.encode()
        self.last_sent = frame(payload)
        self._put(self.last_sent)

    def _put(self, data: bytes) -> None:
        """Send, or note that gdb has gone (its end closed: nothing to report it to)."""
        try:
            self.sock.sendall(data)
        except OSError:
            self.closed = True
