#!/bin/sh
# goldfish-hook: installed by `goldfish init --review-on-push`; reviews the memory changes a push sends.
# `goldfish hook pre-push` runs `goldfish review` on each pushed range (what git gives this hook on
# stdin) and stops the push when a change would be quarantined, edits or deletes a memory line in
# place, or changes the trust policy from outside it. Bypass it once with `git push --no-verify`;
# GOLDFISH=0 turns it off. A pre-push hook that was here before lives on as pre-push.legacy and runs
# first, with the same input; when it fails, the push stops with its status.
input=$(cat)
legacy="$(dirname "$0")/pre-push.legacy"
if [ -x "$legacy" ]; then
    printf '%s\n' "$input" | "$legacy" "$@" || exit $?
fi
[ "${GOLDFISH:-1}" = 0 ] && exit 0
if ! command -v goldfish >/dev/null 2>&1; then
    echo "goldfish pre-push: goldfish is not on PATH; the memory changes of this push were not reviewed" >&2
    exit 0
fi
printf '%s\n' "$input" | goldfish hook pre-push "$@"
status=$?
# 2 is a usage error: the goldfish on PATH is older than this hook and cannot run it.
if [ "$status" = 2 ]; then
    echo "goldfish pre-push: the goldfish on PATH cannot run this hook (older than the goldfish that installed it); the memory changes of this push were not reviewed" >&2
    exit 0
fi
exit $status
