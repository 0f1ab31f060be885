# The installed API: these headers, relative to the repository root, and nothing else.
# `cmake --install` puts each under <prefix>/include/corrtrack/ with its path from its include
# root kept (kernels/include/corrtrack/image.h -> include/corrtrack/corrtrack/image.h,
# app/track/tracker.h -> include/corrtrack/app/track/tracker.h), so an installed consumer writes
# the same #include lines as the code here, with -I<prefix>/include/corrtrack.
# The list is closed under #include (ctest public_headers checks it); the kernel library's
# cpu/ and cuda/ headers and the rest of app/ stay private.
set(corrtrack_public_headers_kernels
  kernels/include/corrtrack/correlator.h
  kernels/include/corrtrack/cuda_peak.h
  kernels/include/corrtrack/cuda_util.h
  kernels/include/corrtrack/image.h
  kernels/include/corrtrack/ncc_math.h
  kernels/include/corrtrack/peak.h
  kernels/include/corrtrack/start_trace.h)
# corrtrack::tracker: the single- and multi-target tracker, its options and result types, and
# the GPU context it runs in.
set(corrtrack_public_headers_tracker
  app/gpu/gpu_context.h
  app/track/options.h
  app/track/tracker.h
  app/track/types.h)
# corrtrack::io: video input (files, image sequences, cameras, URLs) and box files.
set(corrtrack_public_headers_io
  app/io/box_file.h
  app/io/byte_reader.h
  app/io/frame.h
  app/io/frame_source.h
  app/io/host_buffer.h
  app/util/colour.h)
set(corrtrack_public_headers
  ${corrtrack_public_headers_kernels} ${corrtrack_public_headers_tracker} ${corrtrack_public_headers_io})
