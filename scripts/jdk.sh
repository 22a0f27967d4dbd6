# scripts/jdk.sh: sourced by the node scripts. `jdk_home MAJOR` prints the home of a JDK whose
# feature version is MAJOR or newer: JAVA_HOME's when it is new enough, then `java` on PATH, then
# the newest under /usr/lib/jvm. Fails, saying what it looked at, when none is.

# The feature version of the JDK at home $1 (17, 21, 25...), or nothing.
jdk_feature() {
  local release="$1/release" version
  [[ -x "$1/bin/java" ]] || return 1
  if [[ -f "$release" ]]; then
    version="$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$release")"
  else
    # No release file: ask the JVM itself (slower, a JVM start).
    version="$("$1/bin/java" -XshowSettings:properties -version 2>&1 \
      | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p')"
  fi
  [[ "$version" =~ ^[0-9]+$ ]] && echo "$version"
}

jdk_home() {
  local need="$1" candidate best="" best_version=0 version
  local -a candidates=()
  [[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  for candidate in "${candidates[@]}"; do
    version="$(jdk_feature "$candidate")" || continue
    if ((version >= need)); then
      echo "$candidate"
      return 0
    fi
  done
  for candidate in /usr/lib/jvm/*; do
    version="$(jdk_feature "$candidate")" || continue
    if ((version >= need && version > best_version)); then
      best="$candidate"
      best_version="$version"
    fi
  done
  if [[ -n "$best" ]]; then
    echo "$best"
    return 0
  fi
  echo "no JDK $need or newer: not JAVA_HOME (${JAVA_HOME:-unset}), not java on PATH, none under /usr/lib/jvm" >&2
  return 1
}
