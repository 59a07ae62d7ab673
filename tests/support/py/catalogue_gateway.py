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
                                 MODE `halves`: as `passthrough`, but a 2xx answer is handed
                                 back as a whole-looking success (finish_reason `stop`, one JSON
                                 document) with only the first half of the upstream's words: a
                                 truncated success, the lab's Portkey finding.
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


def whole_answer(turn):
    n = int(turn.get("max_tokens") or 16)
    text = " ".join("t%d" % (i + 1) for i in range(n))
    return json.dumps({"id": "x", "object": "chat.completion", "model": "mockai/m1",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": n,
                                 "total_tokens": n + 1}}).encode()


def halved(data):
    """The first half of the words of an answer (SSE or JSON) as a whole-looking success."""
    text = data.decode("utf-8", "replace")
    words = []
    model = "mockai/m1"
    if text.lstrip().startswith("data:"):
        for line in text.splitlines():
            chunk = line[len("data:"):].strip() if line.startswith("data:") else ""
            if not chunk or chunk == "[DONE]":
                continue
            try:
                v = json.loads(chunk)
            except ValueError:
                continue
            model = v.get("model") or model
            for c in v.get("choices") or []:
                words.append((c.get("delta") or {}).get("content") or "")
        words = "".join(words).split()
    else:
        v = json.loads(text or "{}")
        model = v.get("model") or model
        words = (((v.get("choices") or [{}])[0].get("message") or {}).get("content") or "").split()
    kept = words[: len(words) // 2]
    return json.dumps({"id": "x", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": " ".join(kept)}}]}).encode()


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
                if mode == "halves" and not warmup:
                    return send(self, r.status, halved(data))
                return send(self, r.status, data, r.headers.get("content-type", "application/json"))
        except urllib.error.HTTPError as e:
            return send(self, e.code, e.read() or b"{}")
        except Exception as e:  # noqa: BLE001 - any transport failure is the gateway's 502
            return send(self, 502, json.dumps({"error": {"message": "upstream failed: %s" % e}}).encode())


http.server.ThreadingHTTPServer(("127.0.0.1", port), Gateway).serve_forever()
