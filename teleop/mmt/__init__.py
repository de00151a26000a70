"""Model-mediated teleoperation: the session, its configuration, state packets and metrics."""
