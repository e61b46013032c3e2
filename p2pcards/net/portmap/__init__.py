"""Automatic port mapping for the host behind a home router: PCP (RFC 6887) with
NAT-PMP (RFC 6886) its fallback, and UPnP IGD, at once (docs/networking.md).

``result = await nursery.start(map_port, port)`` maps the host's TCP port for at
most two seconds, keeps the mapping renewed, and deletes it when the nursery ends.
"""

from p2pcards.net.portmap.common import MapError, Mapping, default_gateway
from p2pcards.net.portmap.mapper import PortmapConfig, PortMapper, PortmapResult, map_port

__all__ = ["MapError", "Mapping", "PortMapper", "PortmapConfig", "PortmapResult",
           "default_gateway", "map_port"]
