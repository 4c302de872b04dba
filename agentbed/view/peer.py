"""Which local user opened a loopback connection: the uid the kernel lists for the client's end
of the socket (Linux's ``/proc/net/tcp`` and ``tcp6``).

On loopback without ``--token`` the viewer is reachable by every user of the machine, and its
page hands out the secret that lets a request approve a tool call; the approvals folder is 0700,
but the viewer (its owner) writes the decision. A connection whose client end another uid owns
is refused (session 17's probe: ``nobody`` read the page, took the secret and approved a call of
root's run). Where the table cannot be read (not Linux) the uid is unknown and nothing is refused:
``--token`` is the check there, and for a proxy run by another user.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))


def _hex_address(host: str, port: int) -> tuple[str, str]:
    """An address as /proc/net/tcp writes it: each 32-bit word of the IP in host (little-endian)
    order, then the port, in upper-case hex; for an IPv4 address, also its IPv4-mapped IPv6 form."""
    ip = ipaddress.ip_address(host.strip("[]").split("%")[0])
    packed = ip.packed

    def words(data: bytes) -> str:
        return "".join(data[i:i + 4][::-1].hex() for i in range(0, len(data), 4)).upper()

    mapped = words(ipaddress.IPv6Address(f"::ffff:{ip}").packed) if ip.version == 4 else words(packed)
    return f"{words(packed)}:{port:04X}", f"{mapped}:{port:04X}"


NOT_LISTED = -1  # the tables were read and do not list the connection: no user, refused


def peer_uid(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The uid owning the client's end of the TCP connection ``client`` -> ``server``; None when
    no table can be read (the uid is unknown), :data:`NOT_LISTED` when they were read and list no
    such connection (its client end is gone: a client that closed before its request was read
    is not known to be the viewer's user)."""
    mine = set(_hex_address(*client[:2]))
    theirs = set(_hex_address(*server[:2]))
    read = False
    for table in TABLES:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        read = True
        for line in lines:
            fields = line.split()
            if len(fields) > 7 and fields[1] in mine and fields[2] in theirs:
                return int(fields[7])
    return NOT_LISTED if read else None
