"""Reading a request body in the stand-ins' stdlib HTTP servers.

Clients send bodies either with ``Content-Length`` or chunked (git's smart
HTTP and some SDKs do the latter), and ``BaseHTTPRequestHandler`` reads
neither for us.
"""

from __future__ import annotations

from email.message import Message
from io import BufferedIOBase


def read_body(headers: Message, stream: BufferedIOBase) -> bytes:
    """The whole body of the request whose ``headers`` were just read from ``stream``."""
    if headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks: list[bytes] = []
        while True:
            size = int(stream.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                stream.readline()  # the blank line after the last chunk
                return b"".join(chunks)
            chunks.append(stream.read(size))
            stream.readline()
    length = int(headers.get("Content-Length") or 0)
    return stream.read(length) if length else b""
