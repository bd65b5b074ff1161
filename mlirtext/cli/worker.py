"""`mlirtext worker --address HOST:PORT [--devices ...]`: this machine joins a Ray cluster as a worker
node advertising one `device:KIND` resource per device kind it runs, so that remote runs and sweeps
that need a kind are scheduled here. It is `ray start --block` with those resources: Ray's own node,
nothing of ours in between; Ctrl-C (or the head going away) ends it."""
from __future__ import annotations

import json
import subprocess
import sys

from ..cluster import ClusterError, check_reachable, device_resource, import_ray
from ..vm.devices import DEVICES


def main(args) -> int:
    unknown = [d for d in args.devices if d not in DEVICES]
    if unknown or not args.devices:
        print(f"mlirtext worker: error: unknown device {unknown[0] if unknown else ''!r} (devices: "
              f"{', '.join(DEVICES)})", file=sys.stderr)
        return 1
    try:
        import_ray()
        check_reachable(args.address)
    except ClusterError as e:
        print(f"mlirtext worker: error: {e}", file=sys.stderr)
        return 1
    resources = {device_resource(d): 1000 for d in args.devices}   # (many tasks at once: the CPUs limit them)
    command = [sys.executable, "-m", "ray.scripts.scripts", "start", "--address", args.address,
               "--resources", json.dumps(resources), "--block", "--disable-usage-stats"]
    if args.num_cpus:
        command += ["--num-cpus", str(args.num_cpus)]
    print(f"mlirtext worker: joining {args.address} with devices {', '.join(args.devices)}", file=sys.stderr)
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 0
