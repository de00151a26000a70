"""The squid demo: the session runner (:mod:`.run`), its outputs and renders, and its benchmark."""
