"""codeflare.cli."""
