"""Kueue's visibility API (``visibility.kueue.x-k8s.io``) served by the operator as an aggregated API.

:mod:`server` is the HTTPS extension server (front-proxy trust, routes from registrars),
:mod:`endpoints` and :mod:`pending` the pending-workloads answers, :mod:`access` the
SubjectAccessReviews, :mod:`controller` the wiring into the operator (serve, register the
APIServices, readiness).
"""
