#!/usr/bin/env bash
# Prepares, on the Debian 12 build machine, what the GPU host needs besides the build folder
# (it has CUDA 13 but no FFmpeg, FFTW or OpenCV, and no network). Idempotent: downloads are
# kept and reused; the library set and the archives are remade only when their contents change.
#
#   scripts/gpu_bundle.sh [BUILD_DIR]      (default: $CORRTRACK_BUILD_DIR, else build)
#
# Fills the git-ignored folder .gpu/:
#   src/      Debian's FFmpeg source (ffmpeg_<upstream>.orig.tar.xz, the release that the
#             installed libavcodec59 comes from; Debian's patches are not needed) + its .dsc
#   nvcodec/  nv-codec-headers (libffmpeg-nvenc-dev): include/ffnvcodec, lib/pkgconfig/ffnvcodec.pc
#   x264/     libx264 headers, x264.pc and a libx264.so link to lib/libx264.so.164
#   zlib/     zlib headers and libz.so (PNG needs zlib; the GPU host may lack zlib1g-dev)
#   tools/    fallbacks for the GPU host's FFmpeg build, used only where it lacks them:
#             nasm (x86 assembly), GNU make, pkgconf (bin/pkg-config wrapper)
#   lib/      every shared library the binaries load except FFmpeg's own (built on the GPU host
#             by scripts/gpu_ffmpeg_build.sh) and what FFmpeg alone pulls in, the C/C++ runtime
#             (glibc, libstdc++, libgcc_s, libz) and the CUDA/NVIDIA libraries (cuFFT comes from
#             the host's CUDA 13); plus libx264.so.164
#   xvfb/     a display for the GUI on the GPU host (scripts/gpu_gui.sh): Debian's Xvfb and
#             xkbcomp (bin/), their libraries but glibc's (lib/), the keymap data (xkb/), the X
#             libraries GLFW loads with dlopen (client/: Xrandr, Xcursor, Xi...) and
#             dri/swrast_dri.so, a stub built from scripts/gpu_xvfb/glx_stub_dri.c that gives
#             Xvfb's GLX its screen configs without Mesa, so clients render with NVIDIA's GL
#   carry/    WHAT TRAVELS (carry ".gpu/carry"): the FFmpeg tarball (a hard link),
#             deps.tar.xz (lib, nvcodec, x264, zlib, tools; scripts/gpu_ffmpeg_build.sh
#             unpacks it into .gpu/ on the GPU host), build.tar.xz and xvfb.tar.xz (about
#             4 MiB; only where Xvfb is installed here). Fails if carry/ is over 44 MiB.
#   debs/     the downloaded .deb files (not carried)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gpu="$repo/.gpu"
build="${1:-${CORRTRACK_BUILD_DIR:-$repo/build}}"
[ "${build#/}" = "$build" ] && build="$repo/$build"
multiarch=x86_64-linux-gnu
mkdir -p "$gpu"/{src,debs,carry}
say() { echo "gpu_bundle: $*"; }
# shellcheck source=scripts/apt_sources.sh
. "$repo/scripts/apt_sources.sh"
die() { echo "gpu_bundle: error: $*" >&2; exit 1; }
mib() { du -sm "$@" | awk '{ s += $1 } END { print s }'; }
du_h() { du -sh "$@" | awk '{ print $1 }'; }

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
# apt-get with retries: other people may hold apt's locks for a while.
apt_retry() {
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    if "$@"; then return 0; fi
    say "apt command failed (try $i), retrying in 15 s: $*"
    sleep 15
  done
  return 1
}

# ------------------------------------------------------------------ FFmpeg source (orig tarball)
have_ffmpeg_src() { local s; s="$(apt-cache showsrc ffmpeg 2>/dev/null || true)"; grep -q '^Package: ffmpeg' <<<"$s"; }
avver="$(dpkg-query -W -f='${Version}' libavcodec59 2>/dev/null || true)"
[ -n "$avver" ] || avver="$(apt-cache policy libavcodec59 | sed -n 's/^ *Candidate: //p')"
[ -n "$avver" ] && [ "$avver" != "(none)" ] || die "cannot tell which FFmpeg 5.1 release Debian has (libavcodec59)"
upstream="${avver#*:}"; upstream="${upstream%-*}"          # 7:5.1.9-0+deb12u1 -> 5.1.9
orig="ffmpeg_${upstream}.orig.tar.xz"
if [ ! -s "$gpu/src/$orig" ]; then
  if ! have_ffmpeg_src; then
    if ! cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null |
         grep -qE '^(Types:.*deb-src|deb-src )'; then
      # deb-src entries for the mirror apt already uses (scripts/apt_sources.sh), never a
      # host name of our own: the machine may only reach its own mirror.
      f=/etc/apt/sources.list.d/corrtrack-deb-src.sources
      entries="$(apt_deb_src_entries)"
      [ -n "$entries" ] || die "apt has no Debian package source for this release to add a deb-src entry for"
      say "no deb-src entry: writing $f from apt's own sources"
      printf '%s\n' "$entries" | "${sudo_cmd[@]}" tee "$f" >/dev/null
    fi
    apt_retry "${sudo_cmd[@]}" apt-get update -qq
    have_ffmpeg_src || die "apt-cache showsrc ffmpeg finds nothing even after adding deb-src"
  fi
  tmp="$(mktemp -d "$gpu/src/.dl.XXXXXX")"
  say "downloading Debian's ffmpeg $avver source"
  ( cd "$tmp" && { apt_retry apt-get source -qq --download-only "ffmpeg=$avver" ||
                   apt_retry apt-get source -qq --download-only "ffmpeg=${avver#*:}"; } ) ||
    die "apt-get source ffmpeg=$avver failed"
  [ -s "$tmp/$orig" ] || die "no $orig among: $(ls "$tmp")"
  mv -f "$tmp/$orig" "$gpu/src/$orig"
  mv -f "$tmp"/*.dsc "$gpu/src/" 2>/dev/null || true
  rm -rf "$tmp"
fi
# Only one FFmpeg tarball may sit in src/ (the device build takes the one it finds).
for f in "$gpu"/src/ffmpeg_*.orig.tar.xz; do [ "$(basename "$f")" = "$orig" ] || rm -f "$f"; done
say "FFmpeg source: .gpu/src/$orig ($(du -h "$gpu/src/$orig" | cut -f1))"

# ------------------------------------------------------------------ .deb downloads
debs=(libffmpeg-nvenc-dev libx264-164 libx264-dev nasm make pkgconf-bin libpkgconf3 zlib1g-dev)
fetch=()
for p in "${debs[@]}"; do ls "$gpu/debs/${p}_"*.deb >/dev/null 2>&1 || fetch+=("$p"); done
if [ ${#fetch[@]} -gt 0 ]; then
  say "downloading ${fetch[*]}"
  ( cd "$gpu/debs" && apt_retry apt-get download -qq "${fetch[@]}" ) || die "apt-get download failed"
fi
x="$(mktemp -d)"
trap 'rm -rf "$x"' EXIT
for p in "${debs[@]}"; do
  deb="$(ls "$gpu/debs/${p}_"*.deb | sort -V | tail -1)"
  mkdir -p "$x/$p"; dpkg-deb -x "$deb" "$x/$p"
done

# Stage the new .gpu content in $x/stage, then replace the folders that differ.
st="$x/stage"
mkdir -p "$st"/{nvcodec/include,nvcodec/lib/pkgconfig,x264/include,x264/lib/pkgconfig,zlib/include,zlib/lib,tools/bin,tools/lib,lib}

# nv-codec-headers: headers + a relocatable .pc
cp -r "$x/libffmpeg-nvenc-dev/usr/include/ffnvcodec" "$st/nvcodec/include/"
pc="$(find "$x/libffmpeg-nvenc-dev" -name ffnvcodec.pc -print -quit)"
[ -n "$pc" ] || die "no ffnvcodec.pc in libffmpeg-nvenc-dev"
sed -e 's|^prefix=.*|prefix=${pcfiledir}/../..|' -e 's|^includedir=.*|includedir=${prefix}/include|' \
  "$pc" >"$st/nvcodec/lib/pkgconfig/ffnvcodec.pc"

# x264: headers (Debian keeps x264_config.h in the multiarch folder), .pc, the library in lib/
x264_so="$(find "$x/libx264-164" -name 'libx264.so.164' -print -quit)"
cp -L "$x264_so" "$st/lib/libx264.so.164"
ln -s ../../lib/libx264.so.164 "$st/x264/lib/libx264.so"
cp "$x/libx264-dev/usr/include/x264.h" "$st/x264/include/"
cp "$(find "$x/libx264-dev" -name x264_config.h -print -quit)" "$st/x264/include/"
x264ver="$(sed -n 's/^Version: *//p' "$(find "$x/libx264-dev" -name x264.pc -print -quit)")"
cat >"$st/x264/lib/pkgconfig/x264.pc" <<EOF
prefix=\${pcfiledir}/../..
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: x264
Description: H.264 (MPEG4 AVC) encoder library (Debian's libx264-164, carried)
Version: ${x264ver:-0.164}
Libs: -L\${libdir} -lx264
Libs.private: -lpthread -lm -ldl
Cflags: -I\${includedir}
EOF

# zlib: headers + the runtime library as libz.so (the GPU host has libz.so.1 itself)
cp "$x/zlib1g-dev/usr/include/zlib.h" "$x/zlib1g-dev/usr/include/zconf.h" "$st/zlib/include/"
cp -L "/lib/$multiarch/libz.so.1" "$st/zlib/lib/libz.so"

# tools: nasm, make, pkgconf (+ libpkgconf and a pkg-config wrapper)
cp "$x/nasm/usr/bin/nasm" "$x/make/usr/bin/make" "$x/pkgconf-bin/usr/bin/pkgconf" "$st/tools/bin/"
cp -L "$(find "$x/libpkgconf3" -name 'libpkgconf.so.3' -print -quit)" "$st/tools/lib/"
cat >"$st/tools/bin/pkg-config" <<'EOF'
#!/bin/sh
# Debian's pkgconf, carried; its library sits in ../lib.
d="$(cd "$(dirname "$0")" && pwd)"
LD_LIBRARY_PATH="$d/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$d/pkgconf" "$@"
EOF
chmod 755 "$st/tools/bin/"*

# ------------------------------------------------------------------ runtime libraries
[ -x "$build/app/corrtrack" ] || die "no $build/app/corrtrack: build first (or pass BUILD_DIR)"
bins=("$build/app/corrtrack")
while IFS= read -r b; do bins+=("$b"); done < <(find "$build/tests" -maxdepth 1 -type f -name 'test_*' -perm -u+x 2>/dev/null | sort)
# Built on the GPU host, or pulled in only by FFmpeg there.
ffmpeg_re='^lib(av(codec|format|util|device|filter|resample)|sw(scale|resample)|postproc)\.so'
# Present on any Ubuntu 24.04 + CUDA host (and newer there), or the host's own CUDA/driver.
system_re='^(linux-vdso|ld-linux|libc\.so|libm\.so|libmvec|libdl\.so|libpthread|librt\.so|libresolv|libutil\.so|libstdc\+\+|libgcc_s|libz\.so|libcuda|libnvidia|libcudart|libcufft|libcublas|libcurand|libcusparse|libcusolver|libnpp|libnvjpeg|libnvrtc|libnvJitLink)'
declare -A want=()
for b in "${bins[@]}"; do
  while read -r name; do
    [[ "$name" =~ $ffmpeg_re || "$name" =~ $system_re ]] && continue
    want["$name"]=1
  done < <(readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done
# The closure of each wanted library (ldd of a library lists everything it loads).
declare -A path=()
for name in "${!want[@]}"; do
  p="$(ldd "${bins[0]}" "${bins[@]:1}" 2>/dev/null | awk -v n="$name" '$1 == n && $2 == "=>" && !seen++ { print $3 }')"
  [ -n "$p" ] || die "cannot locate $name"
  path["$name"]="$p"
  while read -r dn dp; do
    [[ "$dn" =~ $system_re ]] && continue
    path["$dn"]="$dp"
  done < <(ldd "$p" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }')
done
for name in "${!path[@]}"; do cp -L "${path[$name]}" "$st/lib/$name"; done
say "libraries for .gpu/lib: $(cd "$st/lib" && ls | tr '\n' ' ')"

# ------------------------------------------------------------------ Xvfb for the GUI step
# The GPU host has no X server and no Mesa. Staged in $x/xvfb, installed into .gpu/xvfb and
# packed only when it differs.
xvfb_changed=0
if command -v Xvfb >/dev/null && command -v xkbcomp >/dev/null && [ -d /usr/share/X11/xkb ]; then
  xs="$x/xvfb"
  mkdir -p "$xs"/{bin,lib,dri}
  cp "$(command -v Xvfb)" "$(command -v xkbcomp)" "$xs/bin/"
  # Everything they load but glibc's own libraries (any host has those, newer).
  glibc_re='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread|librt\.so|libresolv)'
  while read -r dn dp; do
    [[ "$dn" =~ $glibc_re ]] || cp -L "$dp" "$xs/lib/$dn"
  done < <(ldd "$xs/bin/Xvfb" "$xs/bin/xkbcomp" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u)
  # What GLFW loads with dlopen (ldd does not see it) for the GUI, the client: in client/.
  mkdir -p "$xs/client"
  for n in libXrandr.so.2 libXcursor.so.1 libXinerama.so.1 libXi.so.6 libXxf86vm.so.1 libXrender.so.1 \
    libXext.so.6 libXfixes.so.3 libX11-xcb.so.1; do
    p="$(ldconfig -p | awk -v n="$n" '$1 == n && /x86-64/ { print $NF; exit }')"
    [ -n "$p" ] && cp -L "$p" "$xs/client/$n"
  done
  cc -shared -fPIC -O2 -Wall -o "$xs/dri/swrast_dri.so" "$repo/scripts/gpu_xvfb/glx_stub_dri.c" ||
    die "cannot build the GLX stub driver"
  # The keymap data of Xvfb's default keymap (rules evdev, pc105, us) and what it includes:
  # 0.7 of xkb-data's 4 MiB.
  xkb=/usr/share/X11/xkb
  mkdir -p "$xs/xkb"/{rules,symbols,geometry}
  cp -r "$xkb/keycodes" "$xkb/types" "$xkb/compat" "$xs/xkb/"
  cp "$xkb/rules/evdev" "$xs/xkb/rules/"
  cp "$xkb/geometry/pc" "$xs/xkb/geometry/"
  for f in pc us inet keypad altwin srvr_ctrl level3 level5 shift ctrl capslock compose group kpdl \
    terminate latin nbsp eurosign; do cp "$xkb/symbols/$f" "$xs/xkb/symbols/"; done
  dpkg-query -W -f='${Package} ${Version}\n' xvfb x11-xkb-utils xkb-data >"$xs/VERSION" 2>/dev/null || true
  if [ ! -d "$gpu/xvfb" ] || ! diff -r --no-dereference "$xs" "$gpu/xvfb" >/dev/null 2>&1; then
    rm -rf "$gpu/xvfb"; cp -a "$xs" "$gpu/xvfb"; xvfb_changed=1
  fi
else
  say "no Xvfb/xkbcomp/xkb data here (Debian: xvfb x11-xkb-utils): no .gpu/carry/xvfb.tar.xz"
  rm -rf "$gpu/xvfb"
fi

# ------------------------------------------------------------------ install into .gpu, pack
changed=0
for d in lib nvcodec x264 zlib tools; do
  if [ -d "$gpu/$d" ] && diff -r --no-dereference "$st/$d" "$gpu/$d" >/dev/null 2>&1; then continue; fi
  rm -rf "$gpu/$d"; cp -a "$st/$d" "$gpu/$d"; changed=1
done
printf 'ffmpeg %s\nsource %s\n' "$avver" "$orig" >"$x/VERSION"
cmp -s "$x/VERSION" "$gpu/VERSION" 2>/dev/null || { cp "$x/VERSION" "$gpu/VERSION"; changed=1; }
# carry/: exactly the two archives
find "$gpu/carry" -mindepth 1 -maxdepth 1 ! -name deps.tar.xz ! -name build.tar.xz ! -name xvfb.tar.xz ! -name "$orig" \
  -exec rm -rf {} +
if [ ! "$gpu/carry/$orig" -ef "$gpu/src/$orig" ]; then
  rm -f "$gpu/carry/$orig"
  ln "$gpu/src/$orig" "$gpu/carry/$orig" 2>/dev/null || cp "$gpu/src/$orig" "$gpu/carry/$orig"
fi
if [ $changed = 1 ] || [ ! -s "$gpu/carry/deps.tar.xz" ]; then
  say "packing .gpu/carry/deps.tar.xz"
  tar -C "$gpu" --owner=0 --group=0 --sort=name -cf - VERSION lib nvcodec x264 zlib tools |
    xz -9 -T2 >"$gpu/carry/deps.tar.xz.tmp"
  mv -f "$gpu/carry/deps.tar.xz.tmp" "$gpu/carry/deps.tar.xz"
else
  say ".gpu/carry/deps.tar.xz is up to date"
fi

if [ -d "$gpu/xvfb" ]; then
  if [ $xvfb_changed = 1 ] || [ ! -s "$gpu/carry/xvfb.tar.xz" ]; then
    say "packing .gpu/carry/xvfb.tar.xz"
    tar -C "$gpu" --owner=0 --group=0 --sort=name -cf - xvfb | xz -9 -T2 >"$gpu/carry/xvfb.tar.xz.tmp"
    mv -f "$gpu/carry/xvfb.tar.xz.tmp" "$gpu/carry/xvfb.tar.xz"
  else
    say ".gpu/carry/xvfb.tar.xz is up to date"
  fi
  say "xvfb: unpacked $(du_h "$gpu/xvfb"), packed $(du_h "$gpu/carry/xvfb.tar.xz")"
else
  rm -f "$gpu/carry/xvfb.tar.xz"
fi

# The build's carried part (app/corrtrack, the test binaries, CMakeCache.txt) is over 64 MiB
# with the tests' CUDA code: it travels as build.tar.xz (about 7 MiB), which gpu_check.sh
# unpacks into the build folder where that has no app/corrtrack.
say "packing .gpu/carry/build.tar.xz"
(cd "$build" && tar --owner=0 --group=0 --sort=name -cf - app/corrtrack CMakeCache.txt \
  $(cd "$build" && find tests -maxdepth 1 -type f -name 'test_*' -perm -u+x | sort)) |
  xz -6 -T2 >"$gpu/carry/build.tar.xz.tmp"
mv -f "$gpu/carry/build.tar.xz.tmp" "$gpu/carry/build.tar.xz"

# ------------------------------------------------------------------ sizes
say "unpacked: .gpu/lib $(du_h "$gpu/lib"), nvcodec+x264+zlib+tools $(du -shc "$gpu"/{nvcodec,x264,zlib,tools} | tail -1 | cut -f1)"
say "carried:  .gpu/carry $(du_h "$gpu/carry") ($(cd "$gpu/carry" && du -h ./* | awk '{ printf "%s %s  ", $2, $1 }'))"
tree="$(cd "$repo" && { git ls-files -z; git ls-files -z --others --exclude-standard; } | xargs -0 du -cb 2>/dev/null | awk '/total$/ { s += $1 } END { printf "%d", s / 1048576 + 0.5 }')"
total=$(( $(mib "$gpu/carry") + tree ))
say "device call: working tree ${tree} MiB + .gpu/carry $(mib "$gpu/carry") MiB = about ${total} MiB (limit 64; .gpu/python and .gpu/data add theirs)"
if [ "$(mib "$gpu/carry")" -gt 44 ]; then die ".gpu/carry is over 44 MiB"; fi
[ "$total" -gt 60 ] && say "warning: the device call is over 60 MiB"
exit 0
