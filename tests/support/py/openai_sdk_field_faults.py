"""Reads the field's faults of a `rehearse upstream` with the official OpenAI Python SDK and prints,
per model, what the SDK returned or raised, as JSON.

Usage: python openai_sdk_field_faults.py BASE_URL MODEL...   (BASE_URL like http://127.0.0.1:PORT)
Each MODEL is read streamed (and `MODEL` ending in `/json` not streamed).
"""
import json
import sys
import time

import openai
from openai import OpenAI


def read(client, model):
    stream = not model.endswith("/json")
    out = {"text": "", "finish_reason": None, "raised": None, "first_token_s": None}
    t0 = time.monotonic()
    try:
        if not stream:
            r = client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": "hi"}], max_tokens=4
            )
            out["text"] = r.choices[0].message.content
            out["finish_reason"] = r.choices[0].finish_reason
            out["first_token_s"] = time.monotonic() - t0
            return out
        chunks = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "hi"}],
            max_tokens=4,
            stream=True,
        )
        for chunk in chunks:
            for choice in chunk.choices:
                if choice.delta.content:
                    if out["first_token_s"] is None:
                        out["first_token_s"] = time.monotonic() - t0
                    out["text"] += choice.delta.content
                if choice.finish_reason is not None:
                    out["finish_reason"] = choice.finish_reason
    except Exception as e:  # what the SDK raises is the point
        out["raised"] = type(e).__name__
        out["status"] = getattr(e, "status_code", None)
        out["code"] = getattr(e, "code", None)
        out["message"] = str(e)[:200]
    return out


def main():
    client = OpenAI(
        base_url=sys.argv[1] + "/v1",
        api_key="sk-rehearse-sdk-test",
        max_retries=0,
        timeout=20.0,
    )
    print(
        json.dumps(
            {
                "sdk_version": openai.__version__,
                "read": {m: read(client, m) for m in sys.argv[2:]},
            }
        )
    )


main()
