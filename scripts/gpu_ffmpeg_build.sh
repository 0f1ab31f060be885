#!/usr/bin/env bash
# Builds a minimal shared FFmpeg 5.1 on the GPU host (run from the repository root there), from
# the source that scripts/gpu_bundle.sh put in .gpu/ on the build machine. The libraries keep
# Debian's sonames and symbol versions (libavcodec.so.59 / LIBAVCODEC_59, libavformat.so.59,
# libavutil.so.57, libswscale.so.6, libswresample.so.4, libavdevice.so.59, libavfilter.so.8),
# so the binaries built on Debian 12 load them through LD_LIBRARY_PATH.
#
#   scripts/gpu_ffmpeg_build.sh            builds and installs into $FFMPEG_PREFIX (/tmp/ffmpeg)
#   scripts/gpu_ffmpeg_build.sh --unpack-only   only unpacks .gpu/carry/deps.tar.xz (if needed)
#
# What it needs there: a C compiler (the one nvcc uses). make, pkg-config and nasm are taken from
# the host when it has them, else from .gpu/tools (Debian's, carried); without any nasm the x86
# assembly is left out. FFnvcodec headers (NVDEC/CUVID, the driver is loaded at run time), x264
# and zlib headers come from .gpu/. If only .gpu/carry was carried, its deps.tar.xz is unpacked
# into .gpu/ first.
#
# Environment:
#   FFMPEG_PREFIX   install prefix (default /tmp/ffmpeg)
#   FFMPEG_BUILD    build folder (default /tmp/ffmpeg-build; the source is unpacked beside it)
#   JOBS            parallel jobs (default: nproc)
#   FORCE=1         rebuild even when $FFMPEG_PREFIX holds a build of the same source and options
#   CORRTRACK_CARRIED_TOOLS=1   use .gpu/tools' make, pkg-config and nasm even where the host
#                               has its own (to test the fallbacks on the build machine)
#   FFMPEG_EXTRA_CONFIGURE      more configure options (words)
#
# Ends by printing the LD_LIBRARY_PATH line for the binaries (also in $FFMPEG_PREFIX/env.sh).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gpu="$repo/.gpu"
prefix="${FFMPEG_PREFIX:-/tmp/ffmpeg}"
bdir="${FFMPEG_BUILD:-/tmp/ffmpeg-build}"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 4)}"
t_start=$SECONDS
say() { echo "gpu_ffmpeg_build: $*"; }
die() { echo "gpu_ffmpeg_build: error: $*" >&2; exit 1; }

# Unpack a .tar.xz: tar + xz where the host has xz, else Python's tarfile (lzma).
untar_xz() {  # ARCHIVE DEST
  mkdir -p "$2"
  if command -v xz >/dev/null 2>&1; then
    tar -C "$2" -xJf "$1"
  else
    python3 - "$1" "$2" <<'EOF'
import sys, tarfile
with tarfile.open(sys.argv[1], "r:xz") as t:
    try:
        t.extractall(sys.argv[2], filter="tar")
    except TypeError:
        t.extractall(sys.argv[2])
EOF
  fi
}

# ------------------------------------------------------------------ carried dependencies
if [ -s "$gpu/carry/deps.tar.xz" ]; then
  need=0
  for d in lib nvcodec x264 zlib tools; do [ -d "$gpu/$d" ] || need=1; done
  if [ $need = 1 ]; then
    say "unpacking .gpu/carry/deps.tar.xz into .gpu/"
    untar_xz "$gpu/carry/deps.tar.xz" "$gpu"
  fi
fi
for d in lib nvcodec x264 zlib; do
  [ -d "$gpu/$d" ] || die "no .gpu/$d (run scripts/gpu_bundle.sh on the build machine and carry .gpu/carry)"
done
[ "${1:-}" = "--unpack-only" ] && exit 0
tarball="$(ls "$gpu"/src/ffmpeg_*.orig.tar.xz "$gpu"/carry/ffmpeg_*.orig.tar.xz 2>/dev/null | head -n 1 || true)"
[ -n "$tarball" ] || die "no FFmpeg source tarball in .gpu/src or .gpu/carry"
version="$(basename "$tarball" .orig.tar.xz)"; version="${version#ffmpeg_}"

# ------------------------------------------------------------------ tools
tool() {  # NAME: the host's unless CORRTRACK_CARRIED_TOOLS=1, else the carried one
  if [ "${CORRTRACK_CARRIED_TOOLS:-0}" != 1 ] && command -v "$1" >/dev/null 2>&1; then
    command -v "$1"
  elif [ -x "$gpu/tools/bin/$1" ]; then
    echo "$gpu/tools/bin/$1"
  fi
}
cc="$(command -v gcc || command -v cc || true)"
[ -n "$cc" ] || die "no C compiler (gcc/cc) on this host"
make_bin="$(tool make)"; [ -n "$make_bin" ] || die "no make (and no .gpu/tools/bin/make)"
pkgconfig_bin="$(tool pkg-config)"; [ -n "$pkgconfig_bin" ] || die "no pkg-config (and no .gpu/tools/bin/pkg-config)"
nasm_bin="$(tool nasm)"
if [ -n "$nasm_bin" ] && ! "$nasm_bin" -v >/dev/null 2>&1; then nasm_bin=""; fi
say "FFmpeg $version, cc $cc, make $make_bin, pkg-config $pkgconfig_bin, nasm ${nasm_bin:-none (x86 asm off)}, $jobs jobs"

# ------------------------------------------------------------------ configure options
export PKG_CONFIG_PATH="$gpu/nvcodec/lib/pkgconfig:$gpu/x264/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
opts=(
  --prefix="$prefix" --cc="$cc" --pkg-config="$pkgconfig_bin"
  --enable-shared --disable-static --disable-doc --disable-debug
  --disable-ffplay --disable-ffprobe          # keep the ffmpeg program (decode throughput tests)
  --enable-gpl --disable-postproc
  --disable-autodetect --enable-pthreads --enable-zlib
  --enable-ffnvcodec --enable-cuda --enable-cuvid --enable-nvdec
  --enable-libx264
  --disable-everything
  --enable-fft --enable-rdft --enable-dct --enable-mdct   # export av_fft_* etc. as Debian's does
  # tests/test_io reads live input from a local HTTP server; the app also opens RTSP cameras
  --enable-network --enable-protocol=file,pipe,tcp,udp,http,rtp
  --enable-demuxer=mov,matroska,avi,image2,mjpeg,h264,hevc,rawvideo,wav,rtsp,mpegts
  --enable-muxer=mp4,mov,matroska,avi,image2,null,wav,mpegts
  --enable-decoder=h264,hevc,mpeg4,msmpeg4v3,mjpeg,png,rawvideo,ffv1,pcm_s16le,h264_cuvid,hevc_cuvid
  --enable-encoder=libx264,mpeg4,mjpeg,png,rawvideo,ffv1,pcm_s16le,wrapped_avframe
  --enable-hwaccel=h264_nvdec,hevc_nvdec
  --enable-parser=h264,hevc,mpeg4video,mjpeg,png
  --enable-bsf=h264_mp4toannexb,hevc_mp4toannexb
  --enable-filter=scale,format,null,hwdownload,testsrc2
  --enable-indev=v4l2,lavfi
  # GCC 14 (newer hosts) made these errors; FFmpeg 5.1 predates it.
  --extra-cflags="-I$gpu/zlib/include -I$gpu/x264/include -Wno-error=incompatible-pointer-types -Wno-error=int-conversion -Wno-error=implicit-function-declaration"
  --extra-ldflags="-L$gpu/zlib/lib -L$gpu/x264/lib"
)
if [ -n "$nasm_bin" ]; then opts+=(--x86asmexe="$nasm_bin"); else opts+=(--disable-x86asm); fi
# shellcheck disable=SC2206  # a list of words on purpose
[ -n "${FFMPEG_EXTRA_CONFIGURE:-}" ] && opts+=(${FFMPEG_EXTRA_CONFIGURE})

stamp="$(printf '%s\n' "$version" "${opts[@]}" | cksum | cut -d' ' -f1)"
if [ "${FORCE:-0}" != 1 ] && [ -s "$prefix/lib/libavcodec.so.59" ] && [ "$(cat "$prefix/.stamp" 2>/dev/null)" = "$stamp" ]; then
  say "$prefix already holds this build (FORCE=1 rebuilds)"
else
  src="$bdir/ffmpeg-$version"
  if [ ! -f "$src/configure" ]; then
    rm -rf "$bdir"; mkdir -p "$bdir"
    untar_xz "$tarball" "$bdir"
    [ -f "$src/configure" ] || die "the tarball did not unpack to $src"
  fi
  log="$bdir/build.log"
  : >"$log"
  t0=$SECONDS
  say "configure (log: $log)"
  if ! (cd "$src" && ./configure "${opts[@]}") >>"$log" 2>&1; then
    tail -n 30 "$log" >&2; tail -n 40 "$src/ffbuild/config.log" >&2 2>/dev/null || true
    die "configure failed"
  fi
  t_conf=$((SECONDS - t0))
  grep -qx 'CONFIG_H264_NVDEC_HWACCEL=yes' "$src/ffbuild/config.mak" || say "warning: h264_nvdec is not enabled"
  grep -qx 'CONFIG_LIBX264_ENCODER=yes' "$src/ffbuild/config.mak" || die "libx264 encoder not enabled"
  say "make -j$jobs"
  if ! "$make_bin" -C "$src" -j"$jobs" >>"$log" 2>&1; then tail -n 40 "$log" >&2; die "make failed"; fi
  t_make=$((SECONDS - t0 - t_conf))
  case "$prefix" in /|/usr|/usr/local|"$HOME") die "refusing to replace $prefix" ;; esac
  rm -rf "$prefix"
  if ! "$make_bin" -C "$src" install >>"$log" 2>&1; then tail -n 30 "$log" >&2; die "make install failed"; fi
  echo "$stamp" >"$prefix/.stamp"
  cp "$log" "$prefix/build.log"
  say "built in $((SECONDS - t0)) s (configure ${t_conf} s, make ${t_make} s)"
fi

# ------------------------------------------------------------------ check and print the path
for so in libavcodec.so.59 libavformat.so.59 libavutil.so.57 libswscale.so.6 libswresample.so.4 libavdevice.so.59 libavfilter.so.8; do
  [ -e "$prefix/lib/$so" ] || die "missing $prefix/lib/$so"
done
ld_path="$prefix/lib:$gpu/lib"
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do [ -d "$d" ] && ld_path="$ld_path:$d"; done
printf 'export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\nexport PATH=%s/bin:$PATH\n' "$ld_path" "$prefix" >"$prefix/env.sh"
v="$(LD_LIBRARY_PATH="$ld_path" "$prefix/bin/ffmpeg" -hide_banner -version 2>&1)" || die "$prefix/bin/ffmpeg does not run: $v"
say "${v%%$'\n'*}"
say "done in $((SECONDS - t_start)) s; for the binaries (also in $prefix/env.sh):"
echo "export LD_LIBRARY_PATH=$ld_path\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
