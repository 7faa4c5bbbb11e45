"""Ports on 127.0.0.1 for the servers the backends start.

:func:`free_port` hands out a port nobody listens on, that no outgoing
connection can take before the server binds it.
"""

import random
import socket
import threading


#: Where the kernel's ephemeral ports start when it does not say.
_EPHEMERAL_LOW = 32768
#: The lowest port :func:`free_port` hands out.
_LOWEST_PORT = 10000
_handed_out = set()
_ports_lock = threading.Lock()


def _ephemeral_low():
    try:
        with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return _EPHEMERAL_LOW


def free_port(attempts=200):
    """A TCP port on 127.0.0.1 nobody listens on, for a server to bind.

    Taken below the kernel's ephemeral range, never handed out twice by
    this process: a port of that range, free when asked, can be taken as
    the local port of any outgoing connection before the server binds
    it (a Galera node then aborts at start, its group communication port
    in use). The bind that checks it is free uses no ``SO_REUSEADDR``, so
    a port still in ``TIME_WAIT`` is passed over too.
    """
    low = _ephemeral_low()
    chooser = random.SystemRandom()
    if low - 1 > _LOWEST_PORT:
        with _ports_lock:
            for _attempt in range(attempts):
                port = chooser.randint(_LOWEST_PORT, low - 1)
                if port in _handed_out:
                    continue
                with socket.socket() as sock:
                    try:
                        sock.bind(('127.0.0.1', port))
                    except OSError:
                        continue
                _handed_out.add(port)
                return port
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]
