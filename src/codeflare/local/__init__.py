"""codeflare.local."""
