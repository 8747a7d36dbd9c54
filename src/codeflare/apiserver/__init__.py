"""codeflare.apiserver."""
