"""Queueing and quota admission (MCAD's role, Kueue's API) inside the operator."""
