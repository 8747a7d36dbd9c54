"""Admission webhooks of the operator: pure rules (admission, raycluster, appwrapper, kueue), HTTPS server.

The rules turn an AdmissionReview request into a response with no I/O (the one exception, the
SubjectAccessReviews of AppWrapper validation, is done by the server and passed in as results).
"""
