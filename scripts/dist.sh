#!/usr/bin/env bash
# The release archives: what install.sh, `cargo binstall goldfish` and the
# Homebrew formula install, so a user needs no compiler.
#
#   bash scripts/dist.sh [--target TRIPLE] [--out DIR]   # one archive
#   bash scripts/dist.sh --formula DIR                   # goldfish.rb from DIR's archives
#
# An archive is DIR/goldfish-VERSION-TARGET.tar.gz (the release build's
# binary, README.md, the licences and NOTICE, in a folder of the same name) and its
# .sha256 (`sha256sum` format). TARGET defaults to this machine's; the
# release workflow (.github/workflows/release.yml) runs this script once per
# platform, then --formula over all the archives. The build is the release
# profile the demo and the tests use (README, "One build"). The embedding
# model is not in the archive: `goldfish model install` fetches it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
repo=$(sed -n 's/^repository = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
out="$root/dist"
target=""
formula=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --target) target=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --formula) formula=$2; shift 2 ;;
        *) echo "dist.sh: unknown argument $1 (see the script's header)" >&2; exit 2 ;;
    esac
done

sha256() { # sha256 FILE: its digest, on Linux and macOS alike
    if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

if [[ -n $formula ]]; then
    # One formula for every platform the release built (on_macos/on_linux,
    # on_arm/on_intel), each with its archive's checksum.
    digest() {
        local archive="$formula/goldfish-$version-$1.tar.gz"
        [[ -f $archive ]] || { echo "dist.sh: no $archive for the formula" >&2; exit 1; }
        sha256 "$archive"
    }
    url() { echo "$repo/releases/download/v$version/goldfish-$version-$1.tar.gz"; }
    cat > "$formula/goldfish.rb" <<EOF
# Homebrew formula for goldfish $version, written by scripts/dist.sh.
class Goldfish < Formula
  desc "Durable, team-shared memory for AI coding agents, kept in git"
  homepage "$repo"
  version "$version"
  license any_of: ["MIT", "Apache-2.0"]
  depends_on "git"

  on_macos do
    on_arm do
      url "$(url aarch64-apple-darwin)"
      sha256 "$(digest aarch64-apple-darwin)"
    end
  end
  on_linux do
    on_arm do
      url "$(url aarch64-unknown-linux-gnu)"
      sha256 "$(digest aarch64-unknown-linux-gnu)"
    end
    on_intel do
      url "$(url x86_64-unknown-linux-gnu)"
      sha256 "$(digest x86_64-unknown-linux-gnu)"
    end
  end

  def install
    bin.install "goldfish"
  end

  def caveats
    "Install the embedding model once: goldfish model install"
  end

  test do
    system "#{bin}/goldfish", "--version"
  end
end
EOF
    echo "$formula/goldfish.rb"
    exit 0
fi

host=$(rustc -vV | sed -n 's/^host: //p')
target=${target:-$host}
cross=()
[[ $target == "$host" ]] || cross=(--target "$target")
# SOURCE_DATE_EPOCH dates the archive's entries only: the bundled SQLite's
# build script would compile again for it, and again for the next build
# without it, while the binary is the same.
env -u SOURCE_DATE_EPOCH cargo build --release --locked --manifest-path "$root/Cargo.toml" --bin goldfish "${cross[@]}"
built=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")
[[ $target == "$host" ]] && built="$built/release" || built="$built/$target/release"

name="goldfish-$version-$target"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name" "$out"
cp "$built/goldfish" "$stage/$name/"
cp "$root/README.md" "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$root/NOTICE" "$stage/$name/"
# Reproducible: fixed owner, order and times, so one commit gives one digest.
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner \
    --mtime="@${SOURCE_DATE_EPOCH:-0}" -cf - "$name" | gzip -n > "$out/$name.tar.gz"
(cd "$out" && echo "$(sha256 "$name.tar.gz")  $name.tar.gz" > "$name.tar.gz.sha256")
echo "$out/$name.tar.gz"
