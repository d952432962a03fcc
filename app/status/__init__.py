"""`trainstack status`: why each training job of a stack is queued, admitted but not running,
running, failed or finished, in one line of cause with its fix, from the controllers' own
conditions, reasons and messages (sources.py names where each is defined).

snapshot.py reads what a cluster holds (a `kubectl get ... -o json` List, a directory of them, or
a fleet's manager.json and worker-<name>.json); explain.py and its helpers queued.py and pods.py
turn one job's objects into a Finding; live.py reads a deployed stack's clusters with kubectl and
writes dumps; cli.py is the command."""
