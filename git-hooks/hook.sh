#!/bin/sh
# goldfish-hook: installed by `goldfish init`; keeps the goldfish memory index in sync.
# A hook that was here before goldfish was installed lives on as @HOOK@.legacy and runs first;
# its exit status is this hook's. goldfish itself never fails, blocks or prints (set
# GOLDFISH_HOOK_VERBOSE=1 to see its output; GOLDFISH=0 turns it off).
status=0
legacy="$(dirname "$0")/@HOOK@.legacy"
if [ -x "$legacy" ]; then
    "$legacy" "$@"
    status=$?
fi
if [ "${GOLDFISH:-1}" != 0 ] && command -v goldfish >/dev/null 2>&1; then
    if [ -n "${GOLDFISH_HOOK_VERBOSE:-}" ]; then
        goldfish hook @HOOK@ "$@" </dev/null || true
    else
        goldfish hook @HOOK@ "$@" </dev/null >/dev/null 2>&1 || true
    fi
fi
exit $status
