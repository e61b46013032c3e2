"""The table session: each peer's sans-I/O state machine, its wire format and audit
(DESIGN.md section 3, docs/protocol.md)."""
