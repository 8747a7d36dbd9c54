"""codeflare.sdk."""
