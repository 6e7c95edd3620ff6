#!/usr/bin/env bash
# The release pipeline's steps that can run on this machine (CI runs it):
# build this platform's archive as the release workflow does, check that one
# commit gives one archive, install it with install.sh into a temporary
# prefix (a tampered archive refused), write the Homebrew formula, then run
# the demo with the installed binary and nothing built on PATH.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/goldfish-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT

archive=$(SOURCE_DATE_EPOCH=0 bash "$root/scripts/dist.sh" --out "$work/dist" | tail -n 1)
again=$(SOURCE_DATE_EPOCH=0 bash "$root/scripts/dist.sh" --out "$work/again" | tail -n 1)
cmp "$archive" "$again" || { echo "dist_check: two builds of one commit gave two archives" >&2; exit 1; }
(cd "$(dirname "$archive")" && sha256sum -c "$(basename "$archive").sha256")

# A tampered archive is refused and installs nothing.
cp "$archive" "$work/tampered.tar.gz"
cp "$archive.sha256" "$work/tampered.tar.gz.sha256"
printf 'x' >> "$work/tampered.tar.gz"
if sh "$root/install.sh" --archive "$work/tampered.tar.gz" --prefix "$work/bad" 2> "$work/refused"; then
    echo "dist_check: install.sh installed a tampered archive" >&2; exit 1
fi
grep -q "not installed" "$work/refused"
[[ ! -e $work/bad/bin/goldfish ]]

sh "$root/install.sh" --archive "$archive" --prefix "$work/prefix"
"$work/prefix/bin/goldfish" --version

# The formula names the archive and its digest (the other platforms' archives
# are stand-ins here: only the release workflow builds them).
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
for other in aarch64-apple-darwin aarch64-unknown-linux-gnu x86_64-unknown-linux-gnu; do
    [[ -e $work/dist/goldfish-$version-$other.tar.gz ]] || echo "stand-in" > "$work/dist/goldfish-$version-$other.tar.gz"
done
bash "$root/scripts/dist.sh" --formula "$work/dist" > /dev/null
grep -q "sha256 \"$(cut -d' ' -f1 < "$archive.sha256")\"" "$work/dist/goldfish.rb"

# The demo with the installed binary: no cargo, no target/ on PATH.
GOLDFISH_BIN_DIR="$work/prefix/bin" bash "$root/scripts/demo.sh" > "$work/demo.log"
grep -q "installed binary: $work/prefix/bin/goldfish" "$work/demo.log"
echo "dist_check: archive, checksum, install, formula and the demo with the installed binary all pass"
