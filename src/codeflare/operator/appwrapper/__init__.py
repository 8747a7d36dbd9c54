"""The AppWrapper controller (workload.codeflare.dev/v1beta2): lifecycle, fault tolerance, cleanup.

Pure decisions live in :mod:`podsets` (where the pod templates are and what to inject into them),
:mod:`faults` (the fault-tolerance knobs of one AppWrapper) and :mod:`lifecycle` (the next phase,
conditions and action from an observation); :mod:`controller` observes the API, carries the
decisions out and writes status. Queueing and admission are not done here: the queueing
controller flips ``spec.suspend`` and writes ``podSetInfos``. The label, finalizer and
annotation keys are in :mod:`codeflare.k8s.constants`; the work queue is
:mod:`codeflare.k8s.workqueue`'s.
"""
