#!/usr/bin/env bash
# run6's EXTRA: issue 10's scale numbers from `corrtrack bench --e2e` on a testsrc2 1080p H.264
# clip made here: 1 to 1024 targets (NVDEC), 32 streams at full speed (NVDEC alone and auto)
# against the decode-only ceiling, and 32 streams paced live.
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run6
/tmp/ffmpeg/bin/ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=12 -c:v libx264 \
  -preset veryfast -pix_fmt yuv420p /tmp/e2e-1080p.mp4
timeout 70 build/app/corrtrack bench --e2e /tmp/e2e-1080p.mp4 --e2e-decode nvdec --targets 1,64,256,1024 --e2e-repeats 1 \
  --e2e-frames 300 --json $E/e2e_targets.json > $E/e2e_targets.txt 2>&1; echo "targets rc $?"; cat $E/e2e_targets.txt | tail -12
timeout 80 build/app/corrtrack bench --e2e /tmp/e2e-1080p.mp4 --e2e-decode nvdec,auto --streams 32 --e2e-repeats 1 \
  --e2e-frames 300 --json $E/e2e_streams.json > $E/e2e_streams.txt 2>&1; echo "streams rc $?"; tail -12 $E/e2e_streams.txt
timeout 30 build/app/corrtrack bench --e2e /tmp/e2e-1080p.mp4 --e2e-decode auto --streams 32 --realtime --e2e-repeats 1 \
  --e2e-frames 150 --json $E/e2e_streams_rt.json > $E/e2e_streams_rt.txt 2>&1; echo "realtime rc $?"; tail -8 $E/e2e_streams_rt.txt
