#!/usr/bin/env python3
"""Did the gate write its memory to an OnFailure Job while the Job controller was
recording that the restart limit was reached?

Usage: memory_window.py JOB_VERSIONS POD_VERSIONS JOB_NAME_PREFIX BACKOFF_LIMIT

JOB_VERSIONS and POD_VERSIONS are what `kubectl get jobs|pods -w -o json
--output-watch-events` wrote. The window opens with the first pod version whose
running or pending containers have restarted BACKOFF_LIMIT times (what the controller's
pastBackoffLimitOnFailure counts) and closes with the first Job version carrying a true
FailureTarget or Failed condition. resourceVersions are one counter over all objects
(etcd's revision; kubesim keeps one too), so they order the two streams. Exit 1, with
the versions, when a Job version inside the window changed the gate's memory
annotations; exit 2 when the window never opened or never closed.
"""
import json
import sys

MEMORY = ("envgate.dev/observed-failures", "envgate.dev/last-failure")


def versions(path, prefix):
    text, i, out = open(path).read(), 0, []
    decoder = json.JSONDecoder()
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        try:
            event, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            return out  # the version kubectl is writing now: read on the next call
        obj = event.get("object", {})
        meta = obj.get("metadata", {})
        name = meta.get("name", "")
        owner = meta.get("labels", {}).get("job-name", "")
        if name.startswith(prefix) or owner.startswith(prefix):
            out.append((int(meta["resourceVersion"]), obj))


def restarts(pod):
    status = pod.get("status", {})
    if status.get("phase") not in ("Running", "Pending"):
        return 0
    return sum(c.get("restartCount", 0)
               for key in ("initContainerStatuses", "containerStatuses")
               for c in status.get(key) or [])


def recorded(job):
    return any(c.get("status") == "True" and c.get("type") in ("FailureTarget", "Failed")
               for c in job.get("status", {}).get("conditions") or [])


def main():
    jobs_path, pods_path, prefix, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    jobs, pods = versions(jobs_path, prefix), versions(pods_path, prefix)
    opened = next((rv for rv, p in pods if restarts(p) >= max(limit, 1)), None)
    closed = next((rv for rv, j in jobs if recorded(j)), None)
    if opened is None or closed is None:
        print(f"the window never {'opened' if opened is None else 'closed'}: "
              f"{len(pods)} pod and {len(jobs)} Job versions")
        return 2
    previous, inside = None, []
    for rv, job in jobs:
        annotations = job.get("metadata", {}).get("annotations", {})
        memory = tuple(annotations.get(k) for k in MEMORY)
        if previous is not None and memory != previous and opened < rv < closed:
            inside.append(rv)
        previous = memory
    if inside:
        print(f"the gate wrote its memory at resourceVersion {inside}, after the pod reached "
              f"the restart limit at {opened} and before the controller recorded it at {closed}")
        return 1
    print(f"window {opened}..{closed}: no memory write inside")
    return 0


if __name__ == "__main__":
    sys.exit(main())
