#!/bin/sh
# Installs goldfish from a release archive, with no compiler:
#
#   curl -LsSf https://github.com/goldfish-dev/goldfish/releases/latest/download/install.sh | sh
#
# It picks the archive of this machine (Linux x86_64 or aarch64, macOS on
# Apple silicon), checks its SHA-256 against the release's .sha256, and puts
# the binary in PREFIX/bin (default ~/.local). Options:
#   --prefix DIR       install into DIR/bin
#   --version X.Y.Z    that release instead of the latest
#   --archive FILE     install this local archive (its FILE.sha256 beside it)
# GOLDFISH_RELEASES overrides where releases are downloaded from (default
# https://github.com/goldfish-dev/goldfish/releases): a mirror with the same
# layout, RELEASES/latest redirecting to RELEASES/tag/vX.Y.Z and the files
# in RELEASES/download/vX.Y.Z/ (scripts/dist_check.sh serves one on
# 127.0.0.1).
set -eu

releases="${GOLDFISH_RELEASES:-https://github.com/goldfish-dev/goldfish/releases}"
prefix="${HOME}/.local"
version=""
archive=""
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=$2; shift 2 ;;
        --version) version=$2; shift 2 ;;
        --archive) archive=$2; shift 2 ;;
        *) echo "install.sh: unknown argument $1 (--prefix DIR, --version X.Y.Z, --archive FILE)" >&2; exit 2 ;;
    esac
done

fail() { echo "install.sh: $*" >&2; exit 1; }
sha256() {
    if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then shasum -a 256 "$1" | cut -d' ' -f1
    else fail "neither sha256sum nor shasum is installed: cannot check the archive"; fi
}

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
    Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
    Darwin-arm64) target=aarch64-apple-darwin ;;
    *) fail "no release archive for $(uname -s) $(uname -m): build from source with \`cargo install --locked --path .\` (README)" ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$archive" ]; then
    command -v curl >/dev/null 2>&1 || fail "curl is needed to download the archive"
    if [ -n "$version" ]; then
        base="$releases/download/v$version"
        name="goldfish-$version-$target.tar.gz"
    else
        # The latest release's archive names carry its version: ask for it.
        tag=$(curl -fsSL -o /dev/null -w '%{url_effective}' "$releases/latest") || fail "cannot reach $releases"
        version=${tag##*/tag/v}
        case $version in
            "" | */* | *[!0-9A-Za-z.+-]*) fail "$releases/latest led to $tag, not to a release tag (…/tag/vX.Y.Z): use --version X.Y.Z" ;;
        esac
        base="$releases/download/v$version"
        name="goldfish-$version-$target.tar.gz"
    fi
    curl -fsSL -o "$work/$name" "$base/$name" || fail "cannot download $base/$name"
    curl -fsSL -o "$work/$name.sha256" "$base/$name.sha256" || fail "cannot download $base/$name.sha256"
    archive="$work/$name"
fi
[ -f "$archive" ] || fail "no archive at $archive"
[ -f "$archive.sha256" ] || fail "no checksum at $archive.sha256"
expected=$(cut -d' ' -f1 < "$archive.sha256")
actual=$(sha256 "$archive")
[ "$expected" = "$actual" ] || fail "$archive: SHA-256 $actual, the release says $expected: not installed"

tar -xzf "$archive" -C "$work"
binary=$(find "$work" -path '*/goldfish-*/goldfish' -type f | head -n 1)
[ -n "$binary" ] || fail "$archive holds no goldfish binary"
mkdir -p "$prefix/bin"
# Into place by rename, so a goldfish running as git's merge driver or hook
# never sees half a binary.
cp "$binary" "$prefix/bin/.goldfish.new"
chmod 755 "$prefix/bin/.goldfish.new"
mv -f "$prefix/bin/.goldfish.new" "$prefix/bin/goldfish"
echo "installed $("$prefix/bin/goldfish" --version) to $prefix/bin/goldfish"
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "add $prefix/bin to PATH (git runs goldfish as the merge driver and from hooks)" ;;
esac
echo "next: goldfish model install   (the embedding model, once per machine; without it recall uses keywords only)"
