#!/usr/bin/env python3
"""A stand-in OpenAI-compatible gateway for the warm-up tests (`[target] kind = "http"`).

fake_gateway.py PORT UPSTREAM_URL KEY MODE [COLD_S]
  GET /health                    {"ok":true}
  POST /v1/chat/completions      MODE `proxy`: one model request to UPSTREAM_URL with bearer KEY
                                 (its first turn waits COLD_S seconds before it, like a gateway
                                 warming up on its first turn); 200 with finish_reason "stop" when
                                 the upstream answered 2xx, else 502 naming the upstream's status.
                                 MODE `silent`: answers every turn itself, never asks the upstream.
                                 MODE `router`: a router like LiteLLM's, KEY being `KA,KB,KC`: m1
                                 on KA (retried once), then m1 on KB, then the fallback m2 on KC,
                                 until one answers 2xx; it sends the session's history (every
                                 earlier user message and answer, content as a list of parts, as
                                 OpenClaw does) and, on a session's first turn, a title call of
                                 its own first (no turn's user message in it).
                                 MODE `strip`: `router`, its user messages' turn markers removed.
Environment: FAKE_REQUIRE_TOKEN=T answers 401 to a turn without `Authorization: Bearer T`;
FAKE_HEALTH_PATH=/P answers GET /P only (every other GET path 404).
FAKE_METRICS=1 serves `fake_turns_total` (turns answered) as LiteLLM's proxy does its metrics:
GET /metrics answers 307 to the absolute http://HOST/metrics/; FAKE_METRICS_TOKEN=T answers 401
there without `Authorization: Bearer T`.
"""
import http.server
import json
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.request

port, upstream, key, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cold_s = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
first = [True]
turns = [0]
lock = threading.Lock()
histories = {}  # session (the turn's `user`) -> its messages so far


def answer(handler, status, body):
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def ok_body(text):
    return {"id": "x", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}]}


class Gateway(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if os.environ.get("FAKE_METRICS") and self.path in ("/metrics", "/metrics/"):
            return self.metrics()
        health = os.environ.get("FAKE_HEALTH_PATH")
        if health and self.path != health:
            return answer(self, 404, {"error": "not found"})
        answer(self, 200, {"ok": True, "status": "live"})

    def metrics(self):
        if self.path == "/metrics":
            self.send_response(307)
            self.send_header("location", "http://%s/metrics/" % self.headers.get("host"))
            self.send_header("content-length", "0")
            return self.end_headers()
        want = os.environ.get("FAKE_METRICS_TOKEN")
        if want is not None and self.headers.get("authorization") != "Bearer " + want:
            return answer(self, 401, {"error": "unauthorized access to metrics endpoint"})
        with lock:
            n = turns[0]
        data = ("# TYPE fake_turns_total counter\nfake_turns_total %d\n" % n).encode()
        self.send_response(200)
        self.send_header("content-type", "text/plain; version=0.0.4")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("content-length", "0"))
        turn = json.loads(self.rfile.read(n) or b"{}")
        want = os.environ.get("FAKE_REQUIRE_TOKEN")
        if want is not None and self.headers.get("authorization") != "Bearer " + want:
            return answer(self, 401, {"error": {"message": "unauthorized"}})
        if mode == "silent":
            return answer(self, 200, ok_body("answered without a model"))
        if mode in ("router", "strip"):
            return self.route(turn)
        with lock:
            cold, first[0] = first[0], False
        if cold:
            time.sleep(cold_s)
        req = urllib.request.Request(
            upstream + "/v1/chat/completions",
            data=json.dumps({"model": "mockai/m1", "stream": False, "max_tokens": 4,
                             "messages": [{"role": "user", "content": "hi"}]}).encode(),
            headers={"authorization": "Bearer " + key, "content-type": "application/json"},
            method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                r.read()
            with lock:
                turns[0] += 1
            return answer(self, 200, ok_body("answered"))
        except urllib.error.HTTPError as e:
            return answer(self, 502, {"error": {"message": "upstream said %d" % e.code}})
        except Exception as e:  # noqa: BLE001 - any transport failure is the gateway's 502
            return answer(self, 502, {"error": {"message": "upstream failed: %s" % e}})

    def route(self, turn):
        keys = key.split(",")
        text = turn["messages"][-1]["content"]
        if mode == "strip":
            text = re.sub(r"rehearse-turn-[0-9]+-[0-9a-f]+", "", text)
        session = turn.get("user", "")
        with lock:
            history = histories.setdefault(session, [])
            new_session = not history
            messages = [{"role": "system", "content": "You are a router's agent."}] + history + [
                {"role": "user", "content": [{"type": "text", "text": text}]}]
        if new_session:
            # The gateway's own call: a title for the session (its one user message is the
            # instruction, the turn's text quoted in the system message).
            send(keys[0], "m1", [{"role": "system", "content": "Conversation: " + text},
                                 {"role": "user", "content": "Write a title."}])
        for k, model in ((keys[0], "m1"), (keys[0], "m1"), (keys[1], "m1"), (keys[2], "m2")):
            if send(k, model, messages) == 200:
                with lock:
                    history += [messages[-1], {"role": "assistant", "content": "t1 t2 t3 t4"}]
                return answer(self, 200, ok_body("answered by " + model))
        return answer(self, 502, {"error": {"message": "every deployment failed"}})

    def log_message(self, *a):
        pass


def send(k, model, messages):
    """One model request to the upstream: its status (0 when no answer came)."""
    req = urllib.request.Request(
        upstream + "/v1/chat/completions",
        data=json.dumps({"model": model, "stream": False, "max_tokens": 4,
                         "messages": messages}).encode(),
        headers={"authorization": "Bearer " + k, "content-type": "application/json"},
        method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except Exception:  # noqa: BLE001 - no answer
        return 0


http.server.ThreadingHTTPServer(("127.0.0.1", port), Gateway).serve_forever()
