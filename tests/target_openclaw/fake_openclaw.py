#!/usr/bin/env python3
"""A stand-in `openclaw` for the supervisor's own tests (no real gateway needed).

`models auth paste-api-key --provider P --profile-id ID`: reads the key from stdin and records
its length in $OPENCLAW_STATE_DIR/pasted.txt (never the key). `gateway run --port P ...`:
behaves as the file `mode` beside this script says:
  exit      print two lines and exit 3
  hang      print a line and never answer /health
  serve     answer GET /health with {"ok":true}; answer each turn (POST /v1/chat/completions)
            after one model request to the first provider of $OPENCLAW_CONFIG_PATH (so the
            harness's warm-up sees it steady); ignore SIGTERM if the file `stubborn` exists;
            start a worker in a process group of its own (like OpenClaw's spawn broker);
            with `serve:NAME`, write /tmp/openclaw-fake-NAME (hard-coded /tmp, like OpenClaw)
  crash:NAME as serve:NAME, then print a line and exit 7 on its second turn (the first after
            the warm-up: a crash mid-run)
  mute      as serve, but only its first turn (the warm-up's) calls the upstream: later turns
            are answered without a model request (a gateway that never calls the provider)
Whatever the mode, `gateway run` prints `[CHANNEL] starting channel` for every entry of the
config's `channels` and `[heartbeat] started` unless `agents.defaults.heartbeat.every` is "0m"
(what a real gateway would start).
`config validate --json`: like 2026.9's, refuses every key whose name starts with `retired`
(`{"valid": false, "issues": [{"path": PARENT, "message": "Unrecognized key: \"KEY\""}]}`,
exit 1), else `{"valid": true}`.
`--version`: prints `OpenClaw VERSION (fake)`, VERSION from the file `version` beside this script
(default 2026.9.6).
"""
import http.server
import json
import os
import signal
import subprocess
import sys
import time

here = os.path.dirname(os.path.realpath(__file__))
args = sys.argv[1:]
state = os.environ.get("OPENCLAW_STATE_DIR", "")

if args == ["--version"]:
    try:
        version = open(os.path.join(here, "version")).read().strip()
    except OSError:
        version = "2026.9.6"
    print("OpenClaw %s (fake)" % version)
    sys.exit(0)

if args[:3] == ["models", "auth", "paste-api-key"]:
    key = sys.stdin.readline().rstrip("\n")
    with open(os.path.join(state, "pasted.txt"), "a") as f:
        f.write("%s %d\n" % (args[args.index("--profile-id") + 1], len(key)))
    print("Auth profile: pasted")
    sys.exit(0)

if args[:2] == ["config", "validate"]:
    path = os.environ["OPENCLAW_CONFIG_PATH"]
    issues = []

    def walk(v, at):
        if isinstance(v, dict):
            for k, x in v.items():
                if k.startswith("retired"):
                    issues.append({"path": at, "message": 'Unrecognized key: "%s"' % k})
                walk(x, at + "." + k if at else k)

    walk(json.load(open(path)), "")
    if issues:
        print(json.dumps({"ok": False, "valid": False, "path": path, "issues": issues}))
        sys.exit(1)
    print(json.dumps({"valid": True, "path": path, "warnings": []}))
    sys.exit(0)

if args[:2] != ["gateway", "run"]:
    sys.exit(64)

mode = open(os.path.join(here, "mode")).read().strip()
port = int(args[args.index("--port") + 1])
print("fake gateway starting on port %d" % port, flush=True)
started_config = json.load(open(os.environ["OPENCLAW_CONFIG_PATH"]))
for channel in started_config.get("channels", {}):
    print("[%s] starting channel" % channel, flush=True)
every = started_config.get("agents", {}).get("defaults", {}).get("heartbeat", {}).get("every")
if every != "0m":
    print("[heartbeat] started (every %s)" % (every or "30m"), flush=True)
if mode == "exit":
    print("fatal: the fake was told to exit", flush=True)
    sys.exit(3)
if mode == "hang":
    while True:
        time.sleep(1)

with open("/tmp/openclaw-fake-" + mode.partition(":")[2], "w") as f:
    f.write(str(os.getpid()))
worker = subprocess.Popen(["sleep", "300"], start_new_session=True)
with open(os.path.join(state, "worker.pid"), "w") as f:
    f.write(str(worker.pid))
if os.path.exists(os.path.join(here, "stubborn")):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
else:
    def bye(*_):
        worker.kill()
        sys.exit(0)
    signal.signal(signal.SIGTERM, bye)


turns = [0]


def model_request():
    import urllib.request
    config = json.load(open(os.environ["OPENCLAW_CONFIG_PATH"]))
    provider = next(iter(config["models"]["providers"].values()))
    body = json.dumps({"model": provider["models"][0]["id"], "stream": False,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    req = urllib.request.Request(provider["baseUrl"] + "/chat/completions", data=body,
                                 headers={"authorization": "Bearer fake-warm",
                                          "content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()
    except Exception:  # noqa: BLE001 - the turn is answered whatever the upstream said
        pass


class Health(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        turns[0] += 1
        if mode.startswith("crash") and turns[0] == 2:
            print("fatal: the fake crashed mid-run", flush=True)
            worker.kill()
            os._exit(7)
        if not (mode == "mute" and turns[0] > 1):
            model_request()
        body = json.dumps({"id": "x", "object": "chat.completion", "choices": [
            {"index": 0, "finish_reason": "stop",
             "message": {"role": "assistant", "content": "ok"}}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        body = b'{"ok":true,"status":"live"}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
