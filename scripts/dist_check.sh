#!/usr/bin/env bash
# The release pipeline's steps that can run on this machine (CI runs it):
# build this platform's archive as the release workflow does, check that one
# commit gives one archive, install it with install.sh into a temporary
# prefix (a tampered archive refused), then as `curl …/install.sh | sh`
# does, from a stand-in for the releases on 127.0.0.1 (a wrong checksum
# refused), write the Homebrew formula, then run the demo with the
# installed binary and nothing built on PATH.
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

# The download path (`curl …/install.sh | sh`): install.sh asks the
# releases for the latest tag, picks this platform's archive by name and
# fetches it and its .sha256, here from a stand-in for the GitHub releases
# on 127.0.0.1 (GOLDFISH_RELEASES), laid out as GitHub lays them out:
# /latest redirecting to /tag/vVERSION, the files in /download/vVERSION/.
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
name=$(basename "$archive")
target=${name#goldfish-"$version"-}
target=${target%.tar.gz}
releases=$work/releases
mkdir -p "$releases/download/v$version" "$releases/download/v9.9.9"
cp "$archive" "$archive.sha256" "$releases/download/v$version/"
# Another release, whose .sha256 its archive does not match.
cp "$archive" "$releases/download/v9.9.9/goldfish-9.9.9-$target.tar.gz"
echo "$(printf 'other' | sha256sum | cut -d' ' -f1)  goldfish-9.9.9-$target.tar.gz" \
    > "$releases/download/v9.9.9/goldfish-9.9.9-$target.tar.gz.sha256"
python3 - "$releases" "$version" "$work/port" 2> "$work/requests.log" <<'PY' &
import functools, http.server, sys
releases, version, port_path = sys.argv[1:4]
class Releases(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/releases/latest":
            self.send_response(302)
            self.send_header("location", "/releases/tag/v" + version)
            self.send_header("content-length", "0")
            self.end_headers()
        elif self.path == "/releases/tag/v" + version:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()
        elif self.path.startswith("/releases/download/"):
            self.path = self.path[len("/releases"):]
            super().do_GET()
        else:
            self.send_error(404)
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Releases, directory=releases))
with open(port_path, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
PY
server=$!
trap 'kill "$server" 2> /dev/null || true; rm -rf "$work"' EXIT
# Up to 30 s for python3 to start and bind, on a loaded machine too.
for _ in $(seq 300); do [[ -s $work/port ]] && break; sleep 0.1; done
from="http://127.0.0.1:$(cat "$work/port")/releases"
GOLDFISH_RELEASES=$from sh "$root/install.sh" --prefix "$work/downloaded" < /dev/null
"$work/downloaded/bin/goldfish" --version
cmp "$work/downloaded/bin/goldfish" "$work/prefix/bin/goldfish"
for file in "$name" "$name.sha256"; do
    grep -q "\"GET /releases/download/v$version/$file HTTP" "$work/requests.log" \
        || { echo "dist_check: install.sh did not download $file from the releases" >&2; exit 1; }
done
# A download its .sha256 does not match, and a release with no archive,
# install nothing.
if GOLDFISH_RELEASES=$from sh "$root/install.sh" --version 9.9.9 --prefix "$work/bad-sum" 2> "$work/refused"; then
    echo "dist_check: install.sh installed a download its .sha256 does not match" >&2; exit 1
fi
grep -q "not installed" "$work/refused"
[[ ! -e $work/bad-sum/bin/goldfish ]]
if GOLDFISH_RELEASES=$from sh "$root/install.sh" --version 0.0.0 --prefix "$work/no-release" 2> "$work/refused"; then
    echo "dist_check: install.sh installed a release that is not there" >&2; exit 1
fi
grep -q "cannot download .*/download/v0.0.0/goldfish-0.0.0-$target.tar.gz" "$work/refused"
[[ ! -e $work/no-release/bin/goldfish ]]
kill "$server"

# The formula names the archive and its digest (the other platforms' archives
# are stand-ins here: only the release workflow builds them).
for other in aarch64-apple-darwin aarch64-unknown-linux-gnu x86_64-unknown-linux-gnu; do
    [[ -e $work/dist/goldfish-$version-$other.tar.gz ]] || echo "stand-in" > "$work/dist/goldfish-$version-$other.tar.gz"
done
bash "$root/scripts/dist.sh" --formula "$work/dist" > /dev/null
grep -q "sha256 \"$(cut -d' ' -f1 < "$archive.sha256")\"" "$work/dist/goldfish.rb"

# The demo with the installed binary: no cargo, no target/ on PATH.
GOLDFISH_BIN_DIR="$work/prefix/bin" bash "$root/scripts/demo.sh" > "$work/demo.log"
grep -q "installed binary: $work/prefix/bin/goldfish" "$work/demo.log"
echo "dist_check: archive, checksum, install (the archive, and from the releases over HTTP), formula and the demo with the installed binary all pass"
