#!/usr/bin/env bash
# The viewer's screenshots in docs/guide/img/: the browser tests of
# tests/it/ui.rs take them (headless chromium at 1280×900, the fixture team
# of that file) into target/tmp/ui-screenshots/; this copies the ones the
# guide shows. Needs chromium and chromium-driver.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo nextest run --release --locked --run-ignored all -E 'test(/^ui::/)'
for name in timeline timeline-phone memory quarantined review confirm released supersede keep branch-review; do
    cp "target/tmp/ui-screenshots/$name.png" "docs/guide/img/viewer-$name.png"
done
