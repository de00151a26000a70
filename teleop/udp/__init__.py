"""The UDP device bridge: the wire format, HMAC keys and the bridge with its client."""
