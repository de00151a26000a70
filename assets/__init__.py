"""The bundled robot (``robots/*.toml``) and experiment (``experiments/*.toml``) files."""
