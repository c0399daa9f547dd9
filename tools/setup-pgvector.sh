#!/usr/bin/env bash
# Builds and installs the pgvector extension for the local PostgreSQL from Debian's next release
# ("trixie") source package, without touching the system's apt lists. Idempotent: does nothing when
# the extension is already installed for this server's major version.
#
# The archive's address is read from the machine's own Debian sources configuration
# (/etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list); it is never written here.
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-$(pg_config --version 2>/dev/null | sed -E 's/^PostgreSQL ([0-9]+).*/\1/' || true)}"
PG_MAJOR="${PG_MAJOR:-15}"
EXT_DIR="/usr/share/postgresql/${PG_MAJOR}/extension"

if [ -f "${EXT_DIR}/vector.control" ] && [ "${FORCE:-0}" != "1" ]; then
  echo "pgvector: already installed for PostgreSQL ${PG_MAJOR}"
  exit 0
fi

SUDO=""
[ "$(id -u)" = "0" ] || SUDO="sudo"

# The archive URI: first deb822 "URIs:" line whose suite is the main (non-security) one,
# else the first one-line "deb" entry of sources.list.
archive_uri() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri=$(awk '/^URIs:/{u=$2} /^Suites:/{ if ($0 !~ /security/ && u != "") { print u; exit } }' "$f")
    [ -n "$uri" ] && { echo "$uri"; return; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    uri=$(awk '$1=="deb" && $0 !~ /security/ { for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' "$f")
    [ -n "$uri" ] && { echo "$uri"; return; }
  done
}

URI="$(archive_uri)"
if [ -z "$URI" ]; then
  echo "pgvector: could not find a Debian archive in the machine's apt sources" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! dpkg -s "postgresql-server-dev-${PG_MAJOR}" >/dev/null 2>&1 || ! command -v dpkg-source >/dev/null; then
  echo "pgvector: installing build dependencies (postgresql-server-dev-${PG_MAJOR}, dpkg-dev, make, gcc, libc6-dev; no recommends, no upgrades), about a minute"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends --no-upgrade "postgresql-server-dev-${PG_MAJOR}" dpkg-dev make gcc libc6-dev >/dev/null
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/lists/partial" "$WORK/archives/partial" "$WORK/src"
# A private sources list: the same archive, the next release's source packages only.
cat > "$WORK/trixie.sources" <<SRC
Types: deb-src
URIs: ${URI}
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
APT_OPTS=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$WORK/parts"
  -o "Dir::State::Lists=$WORK/lists" -o "Dir::Cache::Archives=$WORK/archives"
  -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=" -o "APT::Sandbox::User=root")
mkdir -p "$WORK/parts" && mv "$WORK/trixie.sources" "$WORK/parts/"
echo "pgvector: fetching the trixie source package"
apt-get "${APT_OPTS[@]}" update -qq
(cd "$WORK/src" && apt-get "${APT_OPTS[@]}" source --download-only pgvector >/dev/null)
(cd "$WORK/src" && dpkg-source -x --no-check ./*.dsc build >/dev/null)
echo "pgvector: building against PostgreSQL ${PG_MAJOR}"
make -s -C "$WORK/src/build" PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config" OPTFLAGS="" >/dev/null
$SUDO make -s -C "$WORK/src/build" PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config" install >/dev/null
echo "pgvector: installed $(grep default_version "${EXT_DIR}/vector.control")"
