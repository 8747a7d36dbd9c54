"""codeflare.operator."""
