"""The table session: each peer's sans-I/O state machine, its wire format and audit
(docs/protocol.md)."""
