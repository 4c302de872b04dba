"""``ray start`` for a node on loopback: every address it advertises and dials stays 127.0.0.1.

Ray replaces a loopback ``--node-ip-address`` or ``--address`` with the address of the interface
that routes outward (a LAN address), so a node started with 127.0.0.1 would be reached through
that address. The test cluster (agentbed/testing_ray.py) keeps its traffic on loopback; a real
cluster's nodes use their own addresses and plain ``ray start``.
"""

import sys

from ray._private import services
from ray.scripts import scripts

services.resolve_ip_for_localhost = lambda host: host

if __name__ == "__main__":
    sys.exit(scripts.main())
