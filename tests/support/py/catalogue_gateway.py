#!/usr/bin/env python3
"""Stand-in gateways that try to pass the catalogue falsely (`tests/catalogue.rs`).

catalogue_gateway.py PORT UPSTREAM_URL KEY MODE
  GET /health                    {"ok":true}
  POST /v1/chat/completions      MODE `warmup_only`: the warm-up's turns (sessions
                                 `rehearse-warmup-N`) go to the upstream, so the gateway warms
                                 up; every turn of the run is answered by the gateway itself,
                                 200 with a whole-looking answer, never asking the upstream.
                                 MODE `passthrough`: every turn is one request to the upstream
                                 (model m1, bearer KEY, the turn's messages and stream flag): no
                                 retry, no fallback, no cooldown; the upstream's status and body
                                 are relayed as they came (a transport failure is a 502).
                                 MODE `truncate`: as `passthrough`, but a 2xx answer reaches
                                 the client cut to its first half of content (a JSON answer's
                                 words, a stream's content chunks) and still finished `stop`:
                                 a truncated answer handed over as a success.
                                 MODE `hang`: the warm-up as `passthrough`; every turn of the
                                 run is held open and never answered (the lab's Bifrost hanging
                                 on a silent provider).
"""
import http.server
import json
import sys
import time
import urllib.error
import urllib.request

port, upstream, key, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]


def send(handler, status, data, ctype="application/json"):
    handler.send_response(status)
    handler.send_header("content-type", ctype)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def truncated(data, ctype):
    if ctype.startswith("text/event-stream"):
        events = data.decode().split("\n\n")
        content = [i for i, e in enumerate(events) if '"content"' in e and '"finish_reason":"stop"' not in e
                   and '"finish_reason": "stop"' not in e]
        drop = set(content[(len(content) + 1) // 2:])
        return "\n\n".join(e for i, e in enumerate(events) if i not in drop).encode()
    body = json.loads(data)
    for c in body.get("choices", []):
        words = (c.get("message", {}).get("content") or "").split()
        c["message"]["content"] = " ".join(words[: max(1, len(words) // 2)])
        c["finish_reason"] = "stop"
    return json.dumps(body).encode()


def whole_answer(turn):
    n = int(turn.get("max_tokens") or 16)
    text = " ".join("t%d" % (i + 1) for i in range(n))
    return json.dumps({"id": "x", "object": "chat.completion", "model": "mockai/m1",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": n,
                                 "total_tokens": n + 1}}).encode()


class Gateway(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        send(self, 200, b'{"ok":true}')

    def do_POST(self):
        n = int(self.headers.get("content-length", "0"))
        turn = json.loads(self.rfile.read(n) or b"{}")
        warmup = str(turn.get("user", "")).startswith("conv:rehearse-warmup")
        if mode == "warmup_only" and not warmup:
            return send(self, 200, whole_answer(turn))
        if mode == "hang" and not warmup:
            time.sleep(3600)
            return None
        body = dict(turn, model="m1")
        body.pop("user", None)
        req = urllib.request.Request(
            upstream + "/v1/chat/completions", data=json.dumps(body).encode(),
            headers={"authorization": "Bearer " + key, "content-type": "application/json"},
            method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                data = r.read()
                ctype = r.headers.get("content-type", "application/json")
                if mode == "truncate" and 200 <= r.status < 300:
                    data = truncated(data, ctype)
                return send(self, r.status, data, ctype)
        except urllib.error.HTTPError as e:
            return send(self, e.code, e.read() or b"{}")
        except Exception as e:  # noqa: BLE001 - any transport failure is the gateway's 502
            return send(self, 502, json.dumps({"error": {"message": "upstream failed: %s" % e}}).encode())


server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Gateway)
# Port 0: the kernel's choice, said on the first line of stdout (no free-then-bind race).
print(server.server_address[1], flush=True)
server.serve_forever()
