"""The dashboard: queues, positions, clusters, jobs and nodes at a glance, live in a browser.

``codeflare dashboard`` (and ``codeflare local up``) serve it with aiohttp. It reads the
Kubernetes API with the user's own credentials (a kubeconfig; it has no identity of its own),
so it shows exactly what the user may see. The data layer (:mod:`.snapshot`, :mod:`.work`,
:mod:`.queues`, :mod:`.nodes`, :mod:`.history`) is pure and shared with the notebook widgets
(``codeflare.sdk.widgets``); :mod:`.store` keeps a snapshot current from watches;
:mod:`.server`, :mod:`.pages`, :mod:`.queue_pages` and :mod:`.security` are the web front end;
:mod:`.actions` and :mod:`.logs` reach the API and Ray on the user's behalf. Importing this
package imports nothing heavy; aiohttp is loaded by the server modules only.
"""
