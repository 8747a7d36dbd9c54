"""Who is asking, and may they: authentication, authorization and admission.

Bearer tokens (the admin token, a tokens file, service-account tokens issued through the
TokenRequest subresource), RBAC over stored Roles and bindings with Kubernetes' bootstrap policy,
the access and token review endpoints, and admission: the built-in RBAC escalation check and the
mutating/validating webhooks. Security reads the registry and the store; it never renders HTTP.
"""
