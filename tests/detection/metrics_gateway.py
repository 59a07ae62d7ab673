#!/usr/bin/env python3
"""A stand-in gateway with Prometheus metrics, for `[target] kind = "http"` with `metrics_url`
under `[prometheus]` (tests/detection/http_target.rs).

metrics_gateway.py PORT UPSTREAM_URL KEY
  POST /v1/chat/completions  one model request to UPSTREAM_URL with bearer KEY; 200 when the
                             upstream answered 2xx, else 502 naming its status.
  GET /metrics               the engine's series for one dependency `model`: breaker_state 2
                             (open) while the upstream's last answer was not 2xx, else 0;
                             breaker_transitions_total counting those changes.
  GET anything else          {"ok":true}
"""
import http.server
import json
import sys
import threading
import urllib.error
import urllib.request

port, upstream, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lock = threading.Lock()
state = {"open": False, "trips": 0, "closes": 0}


def answer(handler, status, body, ctype="application/json"):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("content-type", ctype)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def metrics():
    with lock:
        s = dict(state)
    return (
        "# TYPE breaker_state gauge\n"
        f'breaker_state{{dep="model"}} {2 if s["open"] else 0}\n'
        "# TYPE breaker_transitions_total counter\n"
        f'breaker_transitions_total{{dep="model",from="closed",to="open"}} {s["trips"]}\n'
        f'breaker_transitions_total{{dep="model",from="open",to="closed"}} {s["closes"]}\n'
    ).encode()


class Gateway(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/metrics"):
            return answer(self, 200, metrics(), "text/plain; version=0.0.4")
        answer(self, 200, {"ok": True, "status": "live"})

    def do_POST(self):
        n = int(self.headers.get("content-length", "0"))
        self.rfile.read(n)
        req = urllib.request.Request(
            upstream + "/v1/chat/completions",
            data=json.dumps({"model": "mockai/m1", "stream": False, "max_tokens": 4,
                             "messages": [{"role": "user", "content": "hi"}]}).encode(),
            headers={"authorization": "Bearer " + key, "content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                r.read()
                status = r.status
        except urllib.error.HTTPError as e:
            status = e.code
        except Exception:  # noqa: BLE001 - a dead upstream is an error answer, not a crash
            status = 599
        ok = 200 <= status < 300
        with lock:
            if ok and state["open"]:
                state["open"], state["closes"] = False, state["closes"] + 1
            elif not ok and not state["open"]:
                state["open"], state["trips"] = True, state["trips"] + 1
        if ok:
            return answer(self, 200, {"id": "x", "object": "chat.completion", "model": "fake",
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant",
                                                               "content": "ok"}}]})
        answer(self, 502, {"error": {"message": f"upstream answered {status}"}})


http.server.ThreadingHTTPServer(("127.0.0.1", port), Gateway).serve_forever()
