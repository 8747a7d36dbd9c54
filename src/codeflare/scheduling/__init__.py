"""codeflare.scheduling."""
