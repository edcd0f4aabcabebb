#!/usr/bin/env bash
# Debian packages some tests use: Chromium for the browser test, a Korean font for the Korean pages in it
# (Noto CJK; fontconfig's fc-list finds it), WordNet 3.0 for the WSD evaluation.
# Tests that need them skip with a reason when they are missing, so this step is optional on a laptop.
set -u
packages="chromium chromium-driver fontconfig fonts-noto-cjk wordnet-base wordnet-sense-index"
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-system-packages: not root or no apt-get; skipping ($packages)"; exit 0
fi
missing=$(for p in $packages; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
[ -z "$missing" ] && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null \
  || echo "install-system-packages: could not install $missing; the tests that need them will skip"
