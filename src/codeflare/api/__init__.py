"""codeflare.api."""
