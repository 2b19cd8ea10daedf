#!/usr/bin/env python3
"""Verifies one KYC webhook (Standard Webhooks signature) with the Python standard library.

    KYC_WEBHOOK_SECRET=whsec_... python3 verify.py <webhook-id> <webhook-timestamp> '<webhook-signature>' < body

Prints "verified" and exits 0, or prints why not and exits 1. The body must be the raw bytes
received, before any JSON parsing. A timestamp more than KYC_WEBHOOK_TOLERANCE_SECONDS (default
300) away from now is refused as a replay; 0 skips that check (for the published test vector only).
"""
import base64
import hashlib
import hmac
import os
import sys
import time


def verify(secret, webhook_id, timestamp, signature_header, body, tolerance_seconds=300, now=None):
    """Returns None when a signature matches, else the reason it does not."""
    if not timestamp.isdigit():
        return "bad timestamp"
    now = time.time() if now is None else now
    if tolerance_seconds > 0 and abs(now - int(timestamp)) > tolerance_seconds:
        return "timestamp too old or too new"
    key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret)
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    expected = hmac.new(key, signed, hashlib.sha256).digest()
    # One "v1,<base64>" per active secret, separated by spaces (two during a secret's rotation).
    for part in signature_header.split(" "):
        version, _, value = part.partition(",")
        if version != "v1" or not value:
            continue
        try:
            given = base64.b64decode(value, validate=True)
        except ValueError:
            continue
        if hmac.compare_digest(given, expected):
            return None
    return "no signature matches"


def main():
    secret = os.environ.get("KYC_WEBHOOK_SECRET")
    if not secret or len(sys.argv) != 4:
        print("usage: KYC_WEBHOOK_SECRET=whsec_... python3 verify.py <webhook-id> <webhook-timestamp> <webhook-signature> < body", file=sys.stderr)
        return 2
    webhook_id, timestamp, signature = sys.argv[1:4]
    tolerance = int(os.environ.get("KYC_WEBHOOK_TOLERANCE_SECONDS", "300"))
    problem = verify(secret, webhook_id, timestamp, signature, sys.stdin.buffer.read(), tolerance)
    print("verified" if problem is None else f"not verified: {problem}")
    return 0 if problem is None else 1


if __name__ == "__main__":
    sys.exit(main())
