#!/usr/bin/env bash
# Builds the Debian package (cpack in the build directory) and checks it as a user gets it:
#   1. the .deb: name, version (project(VERSION)), Depends from dpkg-shlibdeps, the files it
#      must carry (binary, sample, menu entry, icons, man page, bundled cuFFT) and none it must
#      not (headers, static libraries, the Python module); desktop-file-validate on its entry;
#   2. a clean Debian 12 root (debootstrap --variant=minbase from the mirror in this machine's
#      own apt configuration, whose sources it also gets), `apt-get install ./corrtrack.deb`
#      there (dpkg -i plus the Depends from Debian), then in the root: `corrtrack --version`,
#      no unresolved library, `corrtrack track` on the installed sample (no GPU and no CUDA
#      driver in the root: the CPU path), its boxes equal to the build tree's binary's on the
#      CPU, the menu entry and man page in place; then `apt-get purge` leaves no file behind.
# Needs root (debootstrap, chroot) and Debian's apt mirror; the build directory built first
# (scripts/setup.sh). Prints the time of each step.
#   scripts/deb_test.sh                         package build/ and test it
#   CORRTRACK_DEB=path.deb scripts/deb_test.sh  test a given package
#   CORRTRACK_DEB_BASE=base.tar scripts/deb_test.sh   reuse a debootstrapped base (made there
#                                                      when missing) instead of a fresh one
# Downloads go through this machine's apt cache (CORRTRACK_DEB_APT_CACHE, default
# /var/cache/apt/archives; empty: none): debootstrap and the root's apt take the .debs already
# there (checked against the archive's hashes, as any download) and leave new ones there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CORRTRACK_BUILD_DIR:-$here/build}"
version="$(sed -n 's/^project(corrtrack VERSION \([0-9.]*\).*/\1/p' "$here/CMakeLists.txt")"
t0=$SECONDS
step() { echo "deb_test: $* ($((SECONDS - t0)) s)"; }
fail() {
  echo "deb_test: FAIL: $*" >&2
  exit 1
}
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || fail "needs root (debootstrap and chroot)"
  exec sudo --preserve-env=CORRTRACK_BUILD_DIR,CORRTRACK_DEB,CORRTRACK_DEB_BASE,CORRTRACK_DEB_APT_CACHE "$0" "$@"
fi

# 1. The package.
deb="${CORRTRACK_DEB:-}"
if [ -z "$deb" ]; then
  cmake --build "$build" -j "$(nproc)" --target corrtrack corrtrack_man corrtrack_icons
  (cd "$build" && cpack -G DEB >cpack.log 2>&1) || {
    cat "$build/cpack.log"
    fail "cpack"
  }
  deb="$build/corrtrack_${version}_amd64.deb"
  step "cpack: $(basename "$deb"), $(du -m "$deb" | cut -f1) MB"
fi
[ -f "$deb" ] || fail "no package $deb"
[ "$(basename "$deb")" = "corrtrack_${version}_amd64.deb" ] || fail "package name $(basename "$deb")"
[ "$(dpkg-deb -f "$deb" Package)" = corrtrack ] || fail "Package field"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version $(dpkg-deb -f "$deb" Version), project $version"
[ "$(dpkg-deb -f "$deb" Architecture)" = amd64 ] || fail "Architecture"
depends="$(dpkg-deb -f "$deb" Depends)"
echo "deb_test: Depends: $depends"
for d in libc6 libstdc++6 libavcodec59 libavformat59 libfftw3; do
  [[ "$depends" == *"$d"* ]] || fail "Depends lacks $d"
done
[[ "$depends" != *cuda* ]] || fail "Depends names a CUDA package (none is in Debian 12)"

work="$(mktemp -d /var/tmp/corrtrack-deb-test.XXXXXX)"
root="$work/root"
cache="${CORRTRACK_DEB_APT_CACHE-/var/cache/apt/archives}"
[ -d "$cache" ] || cache=""
cleanup() {
  local m still=""
  for m in "$root/proc" "$root/var/cache/apt/archives"; do
    if mountpoint -q "$m" 2>/dev/null; then umount "$m" || still="$still $m"; fi
  done
  # Never remove through a mount that is still there (the apt cache is the machine's own).
  if [ -n "$still" ]; then
    echo "deb_test: still mounted:$still; $work left in place" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$work/files"
want=(/usr/bin/corrtrack /usr/share/corrtrack/sample.mp4 /usr/share/corrtrack/sample.box
  /usr/share/corrtrack/LICENSE.sample.md /usr/share/applications/corrtrack.desktop
  /usr/share/icons/hicolor/scalable/apps/corrtrack.svg /usr/share/man/man1/corrtrack.1.gz)
for s in 16 24 32 48 64 128 256; do want+=("/usr/share/icons/hicolor/${s}x${s}/apps/corrtrack.png"); done
for f in "${want[@]}"; do grep -qx "$f" "$work/files" || fail "the package lacks $f"; done
grep -q '^/usr/lib/corrtrack/libcufft\.so\.[0-9]*$' "$work/files" || fail "the package lacks the bundled cuFFT"
if grep -E '\.(h|a|pc)$|/cmake/|_corrtrack' "$work/files"; then fail "the package carries development or Python files"; fi
dpkg-deb -x "$deb" "$work/unpacked"
desktop-file-validate "$work/unpacked/usr/share/applications/corrtrack.desktop" || fail "desktop-file-validate"
zcat "$work/unpacked/usr/share/man/man1/corrtrack.1.gz" | grep -q '^\.TH CORRTRACK "1"' || fail "man page header"
for c in track eval bench kernels cameras; do
  zcat "$work/unpacked/usr/share/man/man1/corrtrack.1.gz" | grep -q "corrtrack $c" || fail "man page lacks $c"
done
step "package checked ($(wc -l <"$work/files") entries)"

# 2. A clean Debian 12 root, from this machine's own mirror. (awk: mawk's regular expressions.)
deb_stanza='/(^|\n)Types:([^\n]* )?deb( |\n|$)/'
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  mirror="$(awk -v RS= "$deb_stanza"' && /(^|\n)Suites:([^\n]* )?bookworm( |\n|$)/ {
      if (match($0, /URIs: *[^ \n]+/)) { s = substr($0, RSTART, RLENGTH); sub(/URIs: */, "", s); print s; exit } }' "$f")"
  [ -n "$mirror" ] && break
done
[ -n "$mirror" ] || mirror="$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
[ -n "$mirror" ] || fail "no bookworm mirror in this machine's apt configuration"
if [ -n "${CORRTRACK_DEB_BASE:-}" ] && [ -f "$CORRTRACK_DEB_BASE" ]; then
  mkdir -p "$root"
  tar -xf "$CORRTRACK_DEB_BASE" -C "$root"
  step "base root from $CORRTRACK_DEB_BASE"
else
  debootstrap --variant=minbase ${cache:+--cache-dir="$cache"} bookworm "$root" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log"
    fail "debootstrap from $mirror"
  }
  step "debootstrap --variant=minbase bookworm from $mirror"
  if [ -n "${CORRTRACK_DEB_BASE:-}" ]; then tar -cf "$CORRTRACK_DEB_BASE" -C "$root" .; fi
fi
# The machine's own Debian sources (bookworm, -updates, -security), binary packages only.
rm -f "$root/etc/apt/sources.list"
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  awk -v RS= -v ORS='\n\n' "$deb_stanza"' && /(^|\n)Suites:([^\n]* )?bookworm/' "$f" |
    sed 's/^Types:.*/Types: deb/' >"$work/sources"
  [ -s "$work/sources" ] && cp "$work/sources" "$root/etc/apt/sources.list.d/$(basename "$f")"
done
if [ -f /etc/apt/sources.list ]; then
  grep -E '^deb .* bookworm' /etc/apt/sources.list >"$root/etc/apt/sources.list" || rm -f "$root/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
[ -n "$cache" ] && mount --bind "$cache" "$root/var/cache/apt/archives"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
cp "$deb" "$root/tmp/"
in_root apt-get update -qq
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  "/tmp/$(basename "$deb")" >"$work/apt.log" 2>&1 || {
  tail -30 "$work/apt.log"
  fail "apt-get install ./$(basename "$deb")"
}
in_root dpkg -s corrtrack | grep -q '^Status: install ok installed' || fail "dpkg -s corrtrack"
step "installed in the root with its Depends ($(grep -c '^Setting up' "$work/apt.log") packages set up)"

in_root corrtrack --version | head -n 1 | grep -q "$version" || fail "corrtrack --version in the root"
if in_root ldd /usr/bin/corrtrack | grep 'not found'; then fail "unresolved libraries in the root"; fi
in_root ldd /usr/bin/corrtrack | grep -q 'libcufft\.so\.[0-9]* => /usr/bin/\.\./lib/corrtrack/' || fail "cuFFT not from /usr/lib/corrtrack"
in_root corrtrack track /usr/share/corrtrack/sample.mp4 --csv /tmp/sample.csv >"$work/track.log" 2>&1 || {
  cat "$work/track.log"
  fail "corrtrack track on the installed sample"
}
cat "$work/track.log"
rows="$(grep -c '^[0-9]' "$root/tmp/sample.csv")"
[ "$rows" = 120 ] || fail "corrtrack track wrote $rows rows, not 120"
# The same boxes as the build tree's binary on the CPU (same code, same kernel).
if [ -x "$build/app/corrtrack" ]; then
  CUDA_VISIBLE_DEVICES= "$build/app/corrtrack" track "$here/assets/sample.mp4" --csv "$work/host.csv" >/dev/null 2>&1
  cut -d, -f1,3-7 "$work/host.csv" >"$work/host.boxes"
  cut -d, -f1,3-7 "$root/tmp/sample.csv" >"$work/root.boxes"
  cmp -s "$work/host.boxes" "$work/root.boxes" || fail "the installed binary's boxes differ from the build's"
fi
[ -f "$root/usr/share/applications/corrtrack.desktop" ] || fail "no menu entry in the root"
desktop-file-validate "$root/usr/share/applications/corrtrack.desktop" || fail "desktop-file-validate in the root"
step "corrtrack track in the root: $rows frames, boxes as the build's; menu entry valid"

in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq corrtrack >"$work/purge.log" 2>&1 || {
  cat "$work/purge.log"
  fail "apt-get purge corrtrack"
}
for f in "${want[@]}"; do [ ! -e "$root$f" ] || fail "$f left after purge"; done
step "purged cleanly; passed"
