#!/usr/bin/env bash
# The GUI's whole window on the GPU host (gpu_check.sh's gui step; issue 30). That host has no X
# server and no Mesa: a carried Xvfb (.gpu/carry/xvfb.tar.xz from scripts/gpu_bundle.sh) gives
# the display, its GLX extension served by a stub driver (scripts/gpu_xvfb/glx_stub_dri.c), and
# the GUI renders through NVIDIA's libGLX (__GLX_VENDOR_LIBRARY_NAME=nvidia); where GLX gives no
# context, through EGL on the X11 window (CORRTRACK_GL_API=egl), else on the GPU's EGL device
# into a pbuffer beside the X11 window, which then only carries events (egl-device; the
# screenshots read the pbuffer). The first that works is used, named in gui.txt. Then, `--stats`:
#   - `corrtrack gui` on the 1080p and 4K H.264 clips with 1 and 16 targets, NVDEC decode:
#     the loop's fps (every frame tracked and drawn, warm-up left out), frame times, track fps,
#     the GL strings, whether frames and heatmaps reach GL through CUDA-GL interop;
#   - the A/B panel's full-frame mode, GUI_AB (cuda_mma_fused,cuda_dp4a_ilp), on both clips.
# Writes OUT_DIR/gui.txt (the table), gui.json (every run's summary), gui-line.txt (one line
# for gpu_check's table), gui-*.log and gui-*.json (each run's stderr and stats), and the
# screenshots gui_1080p_16.png, gui_4k_16.png and gui_ab_4k.png (the others stay in /tmp).
#
#   scripts/gpu_gui.sh OUT_DIR CORRTRACK CLIP_1080P CLIP_4K
#
# Environment: GUI_FRAMES_1080P (300), GUI_FRAMES_4K (150), GUI_AB_FRAMES (40), GUI_AB
# (cuda_mma_fused,cuda_dp4a_ilp), GUI_AB_SIDE (64), GUI_DECODE (nvdec), GUI_WINDOW (1920x1080),
# GUI_GLX_VENDOR (nvidia; empty: glvnd's own choice, e.g. Mesa on the build machine),
# GUI_XVFB (the bundle: unpacked from .gpu/carry/xvfb.tar.xz into /tmp/corrtrack-xvfb when
# unset), GUI_DISPLAY (97), GUI_KERNEL (auto), GUI_RUN_LIMIT (40 s a run), GUI_PROBE_LIMIT (25 s
# for each GL API probe), GUI_GL_APIS (the APIs to try, in order: "glx egl egl-device").
# On the build machine (Mesa, no GPU): GUI_DECODE=auto GUI_GLX_VENDOR= GUI_AB=cpu_fast,cpu_opencv
# with smaller frame counts checks the same path (the carried Xvfb and the stub included).
set -uo pipefail
out="$1" ct="$2" clip1080="$3" clip4k="$4"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$out"
shots=/tmp/corrtrack-gui-shots
rm -rf "$shots" && mkdir -p "$shots"
vendor="${GUI_GLX_VENDOR-nvidia}"
decode="${GUI_DECODE:-nvdec}"
window="${GUI_WINDOW:-1920x1080}"
ab="${GUI_AB:-cuda_mma_fused,cuda_dp4a_ilp}"
limit="${GUI_RUN_LIMIT:-40}"
dpy=":${GUI_DISPLAY:-97}"
say() { echo "gpu_gui: $*"; }
fail() { say "FAILED: $*"; exit 3; }

# ------------------------------------------------------------------ the display
xv="${GUI_XVFB:-}"
if [ -z "$xv" ]; then
  xv=/tmp/corrtrack-xvfb
  [ -s "$repo/.gpu/carry/xvfb.tar.xz" ] || fail "no .gpu/carry/xvfb.tar.xz: run scripts/gpu_bundle.sh here with xvfb installed"
  rm -rf "$xv" && mkdir -p "$xv"
  tar -C "$xv" --strip-components=1 -xJf "$repo/.gpu/carry/xvfb.tar.xz" 2>/dev/null ||
    python3 -c 'import sys, tarfile
t = tarfile.open(sys.argv[1])
for m in t.getmembers():
    m.name = m.name.split("/", 1)[1] if "/" in m.name else "."
    t.extract(m, sys.argv[2])' "$repo/.gpu/carry/xvfb.tar.xz" "$xv" || fail "cannot unpack xvfb.tar.xz"
fi
[ -x "$xv/bin/Xvfb" ] || fail "no Xvfb in $xv"
# Xvfb runs xkbcomp from /usr/bin only (its build's path); the host has none: a wrapper there.
if [ ! -x /usr/bin/xkbcomp ]; then
  printf '#!/bin/sh\n# corrtrack gpu_gui.sh: the carried xkbcomp for the carried Xvfb\nLD_LIBRARY_PATH=%s/lib exec %s/bin/xkbcomp "$@"\n' \
    "$xv" "$xv" >/usr/bin/xkbcomp && chmod 755 /usr/bin/xkbcomp || fail "no /usr/bin/xkbcomp and cannot write one"
  say "wrote /usr/bin/xkbcomp (a wrapper of $xv/bin/xkbcomp)"
fi
# Run as root, Xvfb has xkbcomp write the compiled keymap into /var/lib/xkb, which only X's
# packages make; and the font path is the built-in fonts alone (the host has no X fonts).
[ "$(id -u)" = 0 ] && mkdir -p /var/lib/xkb
rm -f "/tmp/.X11-unix/X${dpy#:}" "/tmp/.X${dpy#:}-lock"
env LD_LIBRARY_PATH="$xv/lib" LIBGL_DRIVERS_PATH="$xv/dri" "$xv/bin/Xvfb" "$dpy" -screen 0 3840x2160x24 \
  -nolisten tcp -fp built-ins -xkbdir "$xv/xkb" >"$out/gui-xvfb.log" 2>&1 &
xpid=$!
trap 'kill $xpid 2>/dev/null; wait $xpid 2>/dev/null' EXIT
for _ in $(seq 1 100); do
  [ -S "/tmp/.X11-unix/X${dpy#:}" ] && break
  kill -0 $xpid 2>/dev/null || fail "Xvfb exited: $(tail -n 5 "$out/gui-xvfb.log")"
  sleep 0.1
done
[ -S "/tmp/.X11-unix/X${dpy#:}" ] || fail "Xvfb did not start in 10 s"
export DISPLAY="$dpy"
# The X libraries GLFW loads with dlopen, where the host has none of its own.
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$xv/client"
say "Xvfb $dpy (pid $xpid) from $xv"

# NVIDIA's GL vendor libraries (libGLX_nvidia, libEGL_nvidia) where the driver put them.
if [ -n "$vendor" ]; then
  export __GLX_VENDOR_LIBRARY_NAME="$vendor"
  # (the system folders are searched anyway; a container's driver folder may not be)
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
    [ -e "$d/libGLX_nvidia.so.0" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
  done
  f=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  [ -e "$f" ] && [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$f"
  say "GL vendor libraries: $(ls /usr/local/nvidia/lib64/libGLX_nvidia* /usr/lib/x86_64-linux-gnu/libGLX_nvidia* 2>/dev/null | tr '\n' ' ')"
fi

# gui NAME CLIP FRAMES ARGS...: one run; its stats in $out/gui-NAME.json, stderr in gui-NAME.log
gui() {
  local name="$1" clip="$2" frames="$3"; shift 3
  timeout -k 5 "$limit" "$ct" gui "$clip" --decode "$decode" --kernel "${GUI_KERNEL:-auto}" --window "$window" \
    --frames "$frames" --screenshot "$shots/gui_$name.png" --stats "$out/gui-$name.json" "$@" \
    >"$out/gui-$name.log" 2>&1
}

# Boxes on testsrc2's colour-bar edges (the bars alone are flat: nothing to correlate): one at
# the middle edge; 16 on the first four edges (x = k w/6) at four heights.
boxes() {  # W H N
  local w=$1 h=$2 n=$3 s=$(($1 / 30)) k j
  if [ "$n" = 1 ]; then echo "--box $((w / 2 - s / 2)),$((h * 6 / 10 - s / 2)),$s,$s"; return; fi
  for k in 1 2 3 4; do for j in 0 1 2 3; do
    echo "--box $((w * k / 6 - s / 2)),$((h * (40 + 15 * j) / 100 - s / 2)),$s,$s"
  done; done
}

# ------------------------------------------------------------------ which GL API works
api=""
for try in ${GUI_GL_APIS:-glx egl egl-device}; do
  # shellcheck disable=SC2046  # one word per --box and value
  if CORRTRACK_GL_API=$try limit="${GUI_PROBE_LIMIT:-25}" gui "probe-$try" "$clip1080" 3 $(boxes 1920 1080 1); then
    api=$try
    break
  fi
  say "GL through $try failed: $(grep -v '^$' "$out/gui-probe-$try.log" | tail -n 2 | tr '\n' ' ')"
done
[ -n "$api" ] || fail "no GL context through ${GUI_GL_APIS:-glx egl egl-device} (gui-probe-*.log, gui-xvfb.log)"
export CORRTRACK_GL_API=$api
echo "$api" >"$out/gui-api.txt"
say "GL through $api: $(grep -m1 'GL vendor' "$out/gui-probe-$api.log")"

# ------------------------------------------------------------------ the runs
rc=0
for res in 1080p 4k; do
  if [ $res = 1080p ]; then clip="$clip1080" w=1920 h=1080 frames="${GUI_FRAMES_1080P:-300}"
  else clip="$clip4k" w=3840 h=2160 frames="${GUI_FRAMES_4K:-150}"; fi
  for n in 1 16; do
    # shellcheck disable=SC2046  # one word per --box and value
    gui "${res}_$n" "$clip" "$frames" $(boxes $w $h $n) || { rc=1; say "${res}_$n failed (gui-${res}_$n.log)"; }
  done
  # shellcheck disable=SC2046
  gui "ab_$res" "$clip" "${GUI_AB_FRAMES:-40}" $(boxes $w $h 1) --ab "$ab" --ab-full "${GUI_AB_SIDE:-64}" ||
    { rc=1; say "ab_$res failed (gui-ab_$res.log)"; }
done
for f in gui_1080p_16 gui_4k_16 gui_ab_4k; do [ -f "$shots/$f.png" ] && cp -f "$shots/$f.png" "$out/"; done

# ------------------------------------------------------------------ the table
python3 - "$out" <<'PY' || rc=1
import glob, json, os, sys
out = sys.argv[1]
runs = {}
for f in sorted(glob.glob(os.path.join(out, "gui-*.json"))):
    name = os.path.basename(f)[4:-5]
    try:
        runs[name] = json.load(open(f))
    except ValueError as e:
        runs[name] = {"error": str(e)}
json.dump(runs, open(os.path.join(out, "gui.json"), "w"), indent=1)
lines = []
api = open(os.path.join(out, "gui-api.txt")).read().strip() if os.path.exists(os.path.join(out, "gui-api.txt")) else "?"
first = next((r for r in runs.values() if "gl" in r), None)
if first:
    g = first["gl"]
    lines.append("GL through %s: %s | %s | %s; GPU: %s" % (api, g["vendor"], g["renderer"], g["version"],
                                                             first.get("gpu", "?")))
lines.append("%-11s %7s %6s %8s %8s %8s %9s %-16s %-7s %-6s %-5s" % (
    "run", "frames", "targ", "loop_fps", "med_ms", "p95_ms", "track_fps", "kernel", "decode", "frames", "heat"))
for name, r in runs.items():
    if "loop_fps" not in r:
        continue
    lines.append("%-11s %7d %6d %8.1f %8.2f %8.2f %9.1f %-16s %-7s %-6s %-5s" % (
        name, r["frames"], r["targets"], r["loop_fps"], r["frame_ms"]["median"], r["frame_ms"]["p95"],
        r["track_fps"], r["kernel"], r["decode"], "interop" if r["frame_interop"] else "upload",
        "interop" if r["heatmap_interop"] else "upload"))
for name, r in runs.items():
    ab = r.get("ab")
    if ab:
        lines.append("%s: A/B %s vs %s, %s frame, template %d, map %dx%d: %s" % (
            name, ab["a"], ab["b"], ab["scope"], ab["template"], ab["map"][0], ab["map"][1],
            ("A %.3f ms, B %.3f ms, A/B %.3f, max|A-B| %.3g, peaks agree %s, %d runs (%s)" % (
                ab["ms_a"], ab["ms_b"], ab["ratio"], ab["max_diff"], ab["peaks_agree"], ab["runs"], ab["timing"]))
            if ab["valid"] else "no result: " + ab["error"]))
open(os.path.join(out, "gui.txt"), "w").write("\n".join(lines) + "\n")
# One line for gpu_check's summary table.
fps = ["%s %.0f" % (n, r["loop_fps"]) for n, r in runs.items() if "loop_fps" in r and not n.startswith(("probe", "ab"))]
io = runs.get("1080p_1", {})
open(os.path.join(out, "gui-line.txt"), "w").write("%s: %s; loop fps %s; interop: frames %s, heatmaps %s\n" % (
    api, first["gl"]["renderer"] if first else "?", ", ".join(fps), io.get("frame_interop"), io.get("heatmap_interop")))
print("\n".join(lines))
PY
exit $rc
