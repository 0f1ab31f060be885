#!/usr/bin/env bash
# Prints deb-src entries (deb822 stanzas) for the machine's own Debian package sources: every
# enabled `deb` entry for this release in APT_DIR (default /etc/apt), from *.sources files and
# from one-line sources.list / *.list files, with its mirror, suites, components and key as
# apt has them. Nothing is printed when apt has no such entry. No host name is written here:
# the mirror is whatever the machine's apt uses.
#   scripts/apt_sources.sh deb-src [APT_DIR]
# Sourced, it defines apt_deb_src_entries [APT_DIR].
apt_deb_src_entries() {
  local dir="${1:-/etc/apt}" release f
  release="$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")"
  [ -n "$release" ] || return 0
  # A release's suites: bookworm, bookworm-updates, bookworm-security ...
  for f in "$dir"/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v rel="$release" '
      BEGIN { RS = ""; FS = "\n" }
      {
        deb = 0; ours = 0; off = 0; out = ""
        for (i = 1; i <= NF; i++) {
          line = $i
          if (line ~ /^[ \t]*#/) continue
          if (line ~ /^Types:/) {
            n = split(substr(line, 7), t, /[ \t]+/)
            for (j = 1; j <= n; j++) if (t[j] == "deb") deb = 1
            line = "Types: deb-src"
          } else if (line ~ /^Suites:/) {
            n = split(substr(line, 8), t, /[ \t]+/)
            for (j = 1; j <= n; j++) if (t[j] == rel || index(t[j], rel "-") == 1) ours = 1
          } else if (line ~ /^Enabled:[ \t]*(no|false)/) {
            off = 1
          }
          out = out line "\n"
        }
        if (deb && ours && !off) printf "%s\n", out
      }' "$f"
  done
  for f in "$dir"/sources.list "$dir"/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v rel="$release" '
      $1 == "deb" {
        i = 2; key = ""
        if ($2 ~ /^\[/) {  # [arch=amd64 signed-by=/usr/share/keyrings/x.gpg]
          for (; i <= NF; i++) {
            o = $i; gsub(/[\[\]]/, "", o)
            if (o ~ /^signed-by=/) key = substr(o, 11)
            if ($i ~ /\]$/) { i++; break }
          }
        }
        suite = $(i + 1)
        if (suite != rel && index(suite, rel "-") != 1) next
        comps = ""
        for (j = i + 2; j <= NF; j++) comps = comps " " $j
        printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents:%s\n", $i, suite, comps
        if (key != "") printf "Signed-By: %s\n", key
        printf "\n"
      }' "$f"
  done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  [ "${1:-}" = deb-src ] || { echo "usage: $0 deb-src [APT_DIR]" >&2; exit 2; }
  apt_deb_src_entries "${2:-/etc/apt}"
fi
