#!/usr/bin/env bash
# Resolve the jars that testenv runs (real Kafka broker, Connect, MirrorMaker 2, Flink) with
# Maven into testenv/.cache/jars/<profile>/, and build testenv's own Flink job.
#
#   testenv/fetch.sh            # profile "kafka"
#   testenv/fetch.sh flink      # profile "flink": the Flink MiniCluster classpath (see pom.xml)
#   testenv/fetch.sh flinkjob   # builds flinkjob/ (job + MiniCluster launcher, thin jar)
#                               #   -> .cache/jars/flinkjob/drconsole-flinkjob.jar
#   testenv/fetch.sh flink-1.20       # profile "flink-1.20": Flink 1.20 MiniCluster classpath
#   testenv/fetch.sh flinkjob-1.20    # flinkjob/ built against Flink 1.20 (Maven profile flink-1.20)
#                                     #   -> .cache/jars/flinkjob-1.20/drconsole-flinkjob.jar
#   testenv/fetch.sh flink-2.3        # Flink 2.3 classpath; flinkjob-2.3: the job built against it
#   testenv/fetch.sh kafka-3.9  # the kafka profile at Kafka 3.9.1 -> .cache/jars/kafka-3.9
#   testenv/fetch.sh kafka-3.6  # the kafka profile at Kafka 3.6.2 -> .cache/jars/kafka-3.6
#   testenv/fetch.sh kafka-4.4  # the Kafka 4.4.0 broker only     -> .cache/jars/kafka-4.4
#   testenv/fetch.sh mm2client  # builds mm2client/ (calls MM2's RemoteClusterUtils, thin jar;
#                               #   runs on the kafka profile's classpath)
#                               #   -> .cache/jars/mm2client/drconsole-mm2client.jar
#
# Idempotent: skipped when .cache/jars/<profile>.inputs holds the hash of pom.xml + this script
# (flinkjob: + flinkjob/pom.xml and every file under flinkjob/src). When the hash changed but the
# jars came out the same (another profile was added), the old directory stays in place: worktrees
# sharing one cache then never pull jars from under each other's running JVMs.
# The Maven local repository is testenv/.cache/m2, so a second resolution is offline and fast.
# Needs: JDK 17+ and Maven 3.8+ on PATH, Maven Central (or a mirror in settings.xml) reachable
# on the first run.
set -euo pipefail

profile="${1:-kafka}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# A profile is one of pom.xml's, mm2client, or flinkjob[-<v>] with flinkjob/pom.xml's flink-<v>.
case "$profile" in
  flinkjob|mm2client) ;;
  flinkjob-*) grep -q "<id>flink-${profile#flinkjob-}</id>" "$here/flinkjob/pom.xml" || profile="?$profile" ;;
  *) grep -q "<id>$profile</id>" "$here/pom.xml" || profile="?$profile" ;;
esac
if [[ "$profile" == '?'* ]]; then
  echo "fetch.sh: unknown profile '${profile#?}' (want a profile of pom.xml, flinkjob[-<v>] or mm2client)" >&2
  exit 2
fi
# kafka-3.x only change the kafka profile's version and output directory.
mvnprofiles="$profile"
if [[ "$profile" == kafka-3.* ]]; then mvnprofiles="kafka,$profile"; fi

cache="$here/.cache"
repo="$cache/m2"
jars="$cache/jars/$profile"
# Not <profile>.stamp: fetch.sh before the .inputs change wrote that, and two names let both
# versions of this script share a cache without undoing each other's stamps.
stamp="$cache/jars/$profile.inputs"
mkdir -p "$cache/jars"

for tool in mvn java sha256sum flock; do
  command -v "$tool" >/dev/null 2>&1 || { echo "fetch.sh: '$tool' not found on PATH" >&2; exit 1; }
done

if [[ "$profile" == flinkjob || "$profile" == flinkjob-* ]]; then
  # Sources in a stable order; the hash covers names and contents.
  want="$( { echo "$profile"; cat "$here/pom.xml" "${BASH_SOURCE[0]}" "$here/flinkjob/pom.xml"
             (cd "$here/flinkjob" && find src -type f | LC_ALL=C sort | while read -r f; do
                echo "== $f"; cat "$f"; done) } | sha256sum | cut -d' ' -f1)"
elif [[ "$profile" == mm2client ]]; then
  want="$( { cat "$here/pom.xml" "${BASH_SOURCE[0]}" "$here/mm2client/pom.xml"
             (cd "$here/mm2client" && find src -type f | LC_ALL=C sort | while read -r f; do
                echo "== $f"; cat "$f"; done) } | sha256sum | cut -d' ' -f1)"
else
  want="$(cat "$here/pom.xml" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
fi

# Serialise concurrent runs (several test binaries may call us at once).
exec 9>"$cache/fetch.lock"
flock 9

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -d "$jars" ]] && compgen -G "$jars/*.jar" >/dev/null; then
  exit 0
fi

echo "fetch.sh: resolving/building '$profile' into $jars (maven.repo.local=$repo)" >&2
tmp="$cache/jars/.$profile.tmp.$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)
log="$cache/fetch-$profile.log"

# jar_sums DIR: each jar's entries by name and CRC, without META-INF/maven (it holds the pom,
# which changes when any profile is added); equal sums = the same classes and resources.
jar_sums() {
  local j
  for j in "$1"/*.jar; do
    echo "== ${j##*/}"
    unzip -v "$j" | awk 'NF == 8 && $7 ~ /^[0-9a-f]{8}$/ && $8 !~ /^META-INF\/maven\// {print $7, $8}' | LC_ALL=C sort -k2
  done
}

# install_jars NEWDIR: NEWDIR becomes $jars unless $jars already holds the same jars, then the stamp.
install_jars() {
  if [[ -d "$jars" ]] && [[ "$(jar_sums "$1")" == "$(jar_sums "$jars")" ]]; then
    echo "fetch.sh: $jars already holds these jars; kept" >&2
  else
    rm -rf "$jars"
    mv "$1" "$jars"
  fi
  echo "$want" >"$stamp"
}

if [[ "$profile" == flinkjob || "$profile" == flinkjob-* ]]; then
  # mvn package of flinkjob/ into a fresh build dir (no stale classes), offline first.
  # flinkjob-<v>: the same sources with the flinkjob/pom.xml profile flink-<v>.
  build="$cache/$profile"
  jobprofile=()
  if [[ "$profile" == flinkjob-* ]]; then jobprofile=(-P "flink-${profile#flinkjob-}"); fi
  mvnjob() {
    rm -rf "$build"
    mvn -B "$@" "${jobprofile[@]}" -f "$here/flinkjob/pom.xml" -Dmaven.repo.local="$repo" -Dout.dir="$build" \
      package >"$log" 2>&1
  }
  if ! mvnjob -o && ! mvnjob; then
    echo "fetch.sh: Maven build of flinkjob FAILED; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  mkdir -p "$tmp/$profile"
  cp "$build/target/drconsole-flinkjob.jar" "$tmp/$profile/"
  install_jars "$tmp/$profile"
  echo "fetch.sh: built $jars/drconsole-flinkjob.jar ($(( $(date +%s) - start ))s)" >&2
  exit 0
fi

if [[ "$profile" == mm2client ]]; then
  # Same as flinkjob: mvn package of mm2client/ into a fresh build dir, offline first.
  build="$cache/mm2client"
  mvnclient() {
    rm -rf "$build"
    mvn -B "$@" -f "$here/mm2client/pom.xml" -Dmaven.repo.local="$repo" -Dout.dir="$build" \
      package >"$log" 2>&1
  }
  if ! mvnclient -o && ! mvnclient; then
    echo "fetch.sh: Maven build of mm2client FAILED; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  mkdir -p "$tmp/$profile"
  cp "$build/target/drconsole-mm2client.jar" "$tmp/$profile/"
  install_jars "$tmp/$profile"
  echo "fetch.sh: built $jars/drconsole-mm2client.jar ($(( $(date +%s) - start ))s)" >&2
  exit 0
fi

# Try offline first (fast when the local repo is already complete), then online.
if ! mvn -B -o -f "$here/pom.xml" -Dmaven.repo.local="$repo" -P"$mvnprofiles" \
      -Djars.dir="$tmp" dependency:copy-dependencies >"$log" 2>&1; then
  rm -rf "$tmp"
  if ! mvn -B -f "$here/pom.xml" -Dmaven.repo.local="$repo" -P"$mvnprofiles" \
        -Djars.dir="$tmp" dependency:copy-dependencies >"$log" 2>&1; then
    echo "fetch.sh: Maven resolution FAILED for profile '$profile'; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
fi

# The profile writes into ${jars.dir}/<profile>; move it into place atomically-ish.
if ! compgen -G "$tmp/$profile/*.jar" >/dev/null; then
  echo "fetch.sh: Maven succeeded but produced no jars in $tmp/$profile (see $log)" >&2
  exit 1
fi
install_jars "$tmp/$profile"
echo "fetch.sh: $(ls "$jars" | wc -l) jars in $jars ($(( $(date +%s) - start ))s)" >&2
