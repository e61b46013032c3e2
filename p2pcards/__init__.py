"""p2pcards: a serverless command-line card table."""

__version__ = "0.1.0"
