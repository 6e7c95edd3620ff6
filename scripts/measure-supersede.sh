#!/bin/bash
# Usage: scripts/measure-supersede.sh N SUPERSEDE(0|1) — recall latency over N hand-written memories,
# with every odd one superseding the even one before it when SUPERSEDE=1.
set -e
N=$1; SUP=$2
BIN=${GOLDFISH_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/debug/goldfish}
D=$(mktemp -d)
export HOME=$D/home GOLDFISH_HOME=$D/home/.goldfish GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
mkdir -p $HOME; cd $D; git init -q -b main repo; cd repo
git config user.name A; git config user.email a@example.com
echo x > README.md; git add .; git commit -qm init
$BIN init >/dev/null
python3 - "$N" "$SUP" <<'PY'
import json,sys
n,sup=int(sys.argv[1]),sys.argv[2]=="1"
words="cache queue redis postgres session token retry deploy build index".split()
with open(".goldfish/memories/2026-11-20.jsonl","w") as f:
    for i in range(n):
        m={"id":"01M8%022d"%i,"timestamp":"2026-11-20T10:%02d:%02d.000Z"%(i//60%60,i%60),"type":"decision",
           "content":"Memory %d: the %s uses %s for %s"%(i,words[i%10],words[(i*3)%10],words[(i*7)%10])}
        if sup and i%2==1: m["supersedes"]="01M8%022d"%(i-1)
        f.write(json.dumps(m)+"\n")
PY
git add -A; git commit -qm mem
$BIN sync --quiet
for q in "" "queue token"; do
  best=999999
  for k in 1 2 3 4 5; do
    s=$(date +%s%N); $BIN recall -n 10 --json $q >/dev/null; e=$(date +%s%N)
    t=$(( (e-s)/1000000 )); [ $t -lt $best ] && best=$t
  done
  echo "N=$N supersede=$SUP query='$q' best-of-5 ms=$best shown=$($BIN recall -n 1000 --json $q | wc -l)"
done
rm -rf $D
