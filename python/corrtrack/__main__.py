"""`python -m corrtrack`: version, the GPU (or that there is none) and the kernels."""

import corrtrack

print(f"corrtrack {corrtrack.__version__} ({corrtrack.__file__})")
print(f"device: {corrtrack.device()}")
for k in corrtrack.kernels():
    print(f"  {k.name:24s} {k.device:5s} {'yes' if k.available else 'no ':4s} {k.summary}")
