#!/bin/bash
# Host cost of graph replays on the device tool's H200 (graphcost.cu). Run from the repo root.
cd bench/results/h200_2026-12-03
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
nvcc -arch=sm_90 -O2 graphcost.cu -o /tmp/graphcost && for i in 1 2 3; do /tmp/graphcost; done | tee $OUT/graphcost.txt
