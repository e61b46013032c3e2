"""The network node: identities, TLS links, the journal, one peer's sessions and
their play loop, the host (its door, lobby, relay, watchers and the games after the
first), the joiner and the watcher, and LAN beacons (docs/networking.md)."""
