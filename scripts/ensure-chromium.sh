#!/usr/bin/env bash
# Chromium for Playwright comes from Debian (no browser downloads on this network).
if [ -z "${CHROMIUM_PATH:-}" ]; then
  for candidate in /usr/bin/chromium /usr/bin/chromium-browser; do
    if [ -x "$candidate" ]; then CHROMIUM_PATH="$candidate"; break; fi
  done
fi
if [ -z "${CHROMIUM_PATH:-}" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "› installing chromium (apt-get)"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    CHROMIUM_PATH=/usr/bin/chromium
  else
    echo "Chromium is missing: install Debian's 'chromium' package or set CHROMIUM_PATH." >&2
    exit 1
  fi
fi
export CHROMIUM_PATH
