"""codeflare.kube."""
