"""The network node: identities, TLS links, the lobby, the relay and LAN beacons."""
