#!/usr/bin/env bash
# setup.sh — install shardcheck's build dependencies (Debian bookworm, apt-get)
# and build it in ./build (release).  Safe to run again: it installs only
# what is missing and rebuilds incrementally.
#   tools/setup.sh            install + build
#   tools/setup.sh --deps     install only
#   --fuzz (with either): also clang and its sanitizer/libFuzzer runtime,
#   for the fuzz harnesses (tests/fuzz/run-fuzz.sh; CI runs them)
set -euo pipefail
cd "$(dirname "$0")/.."
deps_only=0 fuzz=0
for a in "$@"; do
  case $a in
    --deps) deps_only=1 ;;
    --fuzz) fuzz=1 ;;
    *) echo "setup: unknown option $a" >&2; exit 2 ;;
  esac
done

packages=(meson ninja-build pkg-config gcc g++ libglib2.0-dev libjansson-dev libcvc5-dev python3)
packages+=(python3-torch)   # tools/shardcheck-capture and tools/shardcheck-export, their test suites
# for the tests only: Graphviz checks `check --dot`, headless Chromium
# renders `check --html` (tests/report)
packages+=(graphviz chromium)
[ $fuzz -eq 1 ] && packages+=(clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ $deps_only -eq 1 ] && exit 0

if [ ! -d build ]; then
  meson setup build --buildtype=release >/dev/null
fi
ninja -C build >/dev/null
echo "setup: built build/src/cli/shardcheck" >&2
