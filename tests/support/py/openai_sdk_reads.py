"""Reads a `rehearse upstream` with the official OpenAI Python SDK and prints what it saw as JSON.

Usage: python openai_sdk_reads.py BASE_URL   (BASE_URL like http://127.0.0.1:PORT)
Model "mockai/m1" is healthy; model "mockai/cut" is cut with the terminal chunk left out.
"""
import json
import sys

import openai
from openai import OpenAI


def read_stream(client, model):
    stream = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=5,
        stream=True,
        stream_options={"include_usage": True},
    )
    out = {"roles": [], "text": "", "finish_reason": None, "usage": None}
    for chunk in stream:
        if chunk.usage is not None:
            out["usage"] = chunk.usage.completion_tokens
        for choice in chunk.choices:
            if choice.delta.role:
                out["roles"].append(choice.delta.role)
            if choice.delta.content:
                out["text"] += choice.delta.content
            if choice.finish_reason is not None:
                out["finish_reason"] = choice.finish_reason
    return out


def main():
    client = OpenAI(
        base_url=sys.argv[1] + "/v1",
        api_key="sk-rehearse-sdk-test",
        max_retries=0,
        timeout=20.0,
    )
    whole = client.chat.completions.create(
        model="mockai/m1",
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=5,
    )
    print(
        json.dumps(
            {
                "sdk_version": openai.__version__,
                "json": {
                    "text": whole.choices[0].message.content,
                    "finish_reason": whole.choices[0].finish_reason,
                    "usage": whole.usage.completion_tokens,
                },
                "stream": read_stream(client, "mockai/m1"),
                "cut": read_stream(client, "mockai/cut"),
            }
        )
    )


main()
