#!/bin/sh
# Verifies one KYC webhook (Standard Webhooks signature) with a POSIX shell and openssl.
#
#   KYC_WEBHOOK_SECRET=whsec_… sh verify.sh <webhook-id> <webhook-timestamp> '<webhook-signature>' < body
#
# Prints "verified" and exits 0, or prints why not and exits 1. The body must be the raw bytes
# received (it is streamed from stdin, never held in a variable, so no byte is changed). A timestamp
# more than KYC_WEBHOOK_TOLERANCE_SECONDS (default 300) away from now is refused as a replay; 0 skips
# that check (for the published test vector only). A shell cannot compare in constant time: use
# this to check a delivery by hand, and one of the other verifiers in a receiver.
set -eu

if [ -z "${KYC_WEBHOOK_SECRET:-}" ] || [ "$#" -ne 3 ]; then
  echo "usage: KYC_WEBHOOK_SECRET=whsec_… sh verify.sh <webhook-id> <webhook-timestamp> <webhook-signature> < body" >&2
  exit 2
fi
id=$1
timestamp=$2
signatures=$3

case $timestamp in
  '' | *[!0-9]*) echo "not verified: bad timestamp"; exit 1 ;;
esac
tolerance=${KYC_WEBHOOK_TOLERANCE_SECONDS:-300}
if [ "$tolerance" -gt 0 ]; then
  now=$(date +%s)
  age=$((now - timestamp))
  if [ "$age" -gt "$tolerance" ] || [ "$age" -lt "-$tolerance" ]; then
    echo "not verified: timestamp too old or too new"
    exit 1
  fi
fi

# The key is the base64 part of the secret after "whsec_", as hex for openssl.
key_hex=$(printf '%s' "${KYC_WEBHOOK_SECRET#whsec_}" | openssl base64 -d -A | od -An -v -tx1 | tr -d ' \n')
expected=$({ printf '%s.%s.' "$id" "$timestamp"; cat; } |
  openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key_hex" -binary | openssl base64 -A)

# One "v1,<base64>" per active secret, separated by spaces (two during a secret's rotation).
for signature in $signatures; do
  if [ "$signature" = "v1,$expected" ]; then
    echo "verified"
    exit 0
  fi
done
echo "not verified: no signature matches"
exit 1
